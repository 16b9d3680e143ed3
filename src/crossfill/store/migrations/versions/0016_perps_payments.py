"""perps payments: the perps payer's journal of signed exchange actions, written before posting

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "perps_payments",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("payment_key", sa.String(length=100), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("signer", sa.String(length=42), nullable=False),
        sa.Column("destination", sa.String(length=42), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("action_type", sa.String(length=16), nullable=False),
        sa.Column("nonce", sa.BigInteger(), nullable=False),
        sa.Column(
            "signed_action",
            sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
            nullable=False,
        ),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("tx_hash", sa.String(length=90), nullable=True),
        sa.Column("ledger_time_ms", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_perps_payments")),
        sa.UniqueConstraint(
            "chain_id",
            "purpose",
            "payment_key",
            "attempt",
            name=op.f("uq_perps_payments_chain_id"),
        ),
        sa.UniqueConstraint("signer", "nonce", name=op.f("uq_perps_payments_signer")),
    )
    op.create_index(op.f("ix_perps_payments_status"), "perps_payments", ["status"])


def downgrade() -> None:
    op.drop_index(op.f("ix_perps_payments_status"), table_name="perps_payments")
    op.drop_table("perps_payments")
