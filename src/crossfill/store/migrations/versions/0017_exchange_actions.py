"""exchange actions: the journal of signed perps-exchange actions, written before posting

Revision ID: 0017
Revises: 0015
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0017"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "exchange_actions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("action_key", sa.String(length=100), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("signer", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.BigInteger(), nullable=False),
        sa.Column("body", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("ledger_hash", sa.String(length=66), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exchange_actions")),
        sa.UniqueConstraint(
            "chain_id",
            "purpose",
            "action_key",
            "attempt",
            name=op.f("uq_exchange_actions_chain_id"),
        ),
        sa.UniqueConstraint("signer", "nonce", name=op.f("uq_exchange_actions_signer")),
    )
    op.create_index(op.f("ix_exchange_actions_status"), "exchange_actions", ["status"])


def downgrade() -> None:
    op.drop_index(op.f("ix_exchange_actions_status"), table_name="exchange_actions")
    op.drop_table("exchange_actions")
