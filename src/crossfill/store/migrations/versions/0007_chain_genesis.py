"""chain genesis: the first block's hash of each chain the database's state belongs to

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chain_genesis",
        sa.Column("chain_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("genesis_hash", sa.String(length=66), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chain_id", name=op.f("pk_chain_genesis")),
    )


def downgrade() -> None:
    op.drop_table("chain_genesis")
