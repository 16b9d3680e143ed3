"""write probes: the row /readyz rewrites to learn whether the database takes writes

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "write_probes",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_write_probes")),
    )


def downgrade() -> None:
    op.drop_table("write_probes")
