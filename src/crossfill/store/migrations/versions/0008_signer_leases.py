"""signer leases: one writer per signing key and chain, fenced by a token

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signer_leases",
        sa.Column("chain_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("sender", sa.String(length=42), nullable=False),
        sa.Column("holder", sa.String(length=200), nullable=False),
        sa.Column("token", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chain_id", "sender", name=op.f("pk_signer_leases")),
    )


def downgrade() -> None:
    op.drop_table("signer_leases")
