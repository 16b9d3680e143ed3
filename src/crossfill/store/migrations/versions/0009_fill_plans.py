"""fill plans: the typed, versioned plan of each request's fill, made when quoted

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("requests") as batch_op:
        batch_op.add_column(sa.Column("fill_plan", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("requests") as batch_op:
        batch_op.drop_column("fill_plan")
