"""permit deposits: signed deposit authorizations (usePermit) the solver submits

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "permit_deposits",
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("order_id", sa.String(length=66), nullable=False),
        sa.Column("depositor", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("valid_before", sa.BigInteger(), nullable=False),
        sa.Column("signature", sa.String(length=132), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_permit_deposits_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_permit_deposits")),
    )
    op.create_index(op.f("ix_permit_deposits_chain_id"), "permit_deposits", ["chain_id"])
    op.create_index(op.f("ix_permit_deposits_state"), "permit_deposits", ["state"])


def downgrade() -> None:
    op.drop_index(op.f("ix_permit_deposits_state"), table_name="permit_deposits")
    op.drop_index(op.f("ix_permit_deposits_chain_id"), table_name="permit_deposits")
    op.drop_table("permit_deposits")
