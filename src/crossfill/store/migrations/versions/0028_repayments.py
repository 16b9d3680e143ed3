"""repayments: each filled order's deposit paid to the solver out of the Depository, by which
transaction, when, and its share of that transaction's gas

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "repayments",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("deposit_id", sa.BigInteger(), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("recipient", sa.String(length=64), nullable=False),
        sa.Column("batch", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("payout_id", sa.String(length=66), nullable=True),
        sa.Column("expiration", sa.BigInteger(), nullable=True),
        sa.Column("tx_hash", sa.String(length=66), nullable=True),
        sa.Column("block_number", sa.BigInteger(), nullable=True),
        sa.Column("gas_used", sa.BigInteger(), nullable=True),
        sa.Column("fee", sa.String(length=78), nullable=True),
        sa.Column("batch_size", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["deposit_id"], ["deposits.id"], name=op.f("fk_repayments_deposit_id_deposits")
        ),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_repayments_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_repayments")),
        sa.UniqueConstraint("deposit_id", name=op.f("uq_repayments_deposit_id")),
    )
    op.create_index("ix_repayments_chain_state", "repayments", ["chain_id", "state"])
    op.create_index(op.f("ix_repayments_batch"), "repayments", ["batch"])
    op.create_index(op.f("ix_repayments_request_id"), "repayments", ["request_id"])
    op.create_index(op.f("ix_repayments_tx_hash"), "repayments", ["tx_hash"])


def downgrade() -> None:
    op.drop_table("repayments")
