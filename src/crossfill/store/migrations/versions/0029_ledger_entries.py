"""ledger_entries: the books, one posting per row, each event's postings balanced

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ledger_entries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("event", sa.String(length=200), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("account", sa.String(length=80), nullable=False),
        sa.Column("amount", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_entries")),
    )
    op.create_index(op.f("ix_ledger_entries_event"), "ledger_entries", ["event"])
    op.create_index(
        "ix_ledger_entries_chain_account", "ledger_entries", ["chain_id", "currency", "account"]
    )


def downgrade() -> None:
    op.drop_table("ledger_entries")
