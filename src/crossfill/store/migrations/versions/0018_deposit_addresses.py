"""deposit addresses: a request's deposit-address terms and payer, and transfers seen at them

Revision ID: 0018
Revises: 0016
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0016"
branch_labels = None
depends_on = None

_REQUEST_COLUMNS = (
    ("deposit_address_type", 8),
    ("recovery_address", 64),
    ("deposit_address_key", 66),
    ("depositor", 64),
    ("deposit_tx_hash", 66),
    ("parent_request_id", 66),
)


def upgrade() -> None:
    with op.batch_alter_table("requests") as batch_op:
        for name, length in _REQUEST_COLUMNS:
            batch_op.add_column(sa.Column(name, sa.String(length=length), nullable=True))
        batch_op.create_index(batch_op.f("ix_requests_parent_request_id"), ["parent_request_id"])
    op.create_table(
        "address_transfers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=False),
        sa.Column("log_index", sa.Integer(), nullable=False),
        sa.Column("block_number", sa.BigInteger(), nullable=False),
        sa.Column("block_hash", sa.String(length=66), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("depositor", sa.String(length=64), nullable=False),
        sa.Column("leg", sa.String(length=8), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"],
            ["requests.id"],
            name=op.f("fk_address_transfers_request_id_requests"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_address_transfers")),
        sa.UniqueConstraint(
            "chain_id", "tx_hash", "log_index", "leg", name=op.f("uq_address_transfers_chain_id")
        ),
    )
    op.create_index(op.f("ix_address_transfers_address"), "address_transfers", ["address"])
    op.create_index(op.f("ix_address_transfers_request_id"), "address_transfers", ["request_id"])
    op.create_index(op.f("ix_address_transfers_state"), "address_transfers", ["state"])


def downgrade() -> None:
    op.drop_table("address_transfers")
    with op.batch_alter_table("requests") as batch_op:
        batch_op.drop_index(batch_op.f("ix_requests_parent_request_id"))
        for name, _length in reversed(_REQUEST_COLUMNS):
            batch_op.drop_column(name)
