"""rebalance_moves: the solver's inventory moved between chains through a bridge; journal
purposes up to 120 characters (a bridge step's `bridge:<request id>:<step>`, a gas top-up's
`gas-top-up:<chain>:<address>`: longer than the 16 PostgreSQL held)

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    op.create_table(
        "rebalance_moves",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("origin_chain_id", sa.BigInteger(), nullable=False),
        sa.Column("destination_chain_id", sa.BigInteger(), nullable=False),
        sa.Column("currency_in", sa.String(length=64), nullable=False),
        sa.Column("currency_out", sa.String(length=64), nullable=False),
        sa.Column("symbol", sa.String(length=32), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("amount_out", sa.String(length=78), nullable=False),
        sa.Column("request_id", sa.String(length=80), nullable=True),
        sa.Column("quote", json, nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("tx_hashes", json, nullable=True),
        sa.Column("reason", sa.String(length=300), nullable=True),
        sa.Column("last_error", sa.String(length=300), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rebalance_moves")),
        sa.UniqueConstraint("request_id", name=op.f("uq_rebalance_moves_request_id")),
    )
    op.create_index("ix_rebalance_moves_status", "rebalance_moves", ["status"])
    _purpose_length(16, PURPOSE_LENGTH)


def downgrade() -> None:
    _purpose_length(PURPOSE_LENGTH, 16)
    op.drop_table("rebalance_moves")


PURPOSE_LENGTH = 120


def _purpose_length(old: int, new: int) -> None:
    with op.batch_alter_table("sent_transactions") as batch_op:
        batch_op.alter_column(
            "purpose",
            existing_type=sa.String(length=old),
            type_=sa.String(length=new),
            existing_nullable=False,
        )
