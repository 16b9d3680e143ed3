"""chain controls: operator overrides of chains

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chain_controls",
        sa.Column("chain_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chain_id", name=op.f("pk_chain_controls")),
    )


def downgrade() -> None:
    op.drop_table("chain_controls")
