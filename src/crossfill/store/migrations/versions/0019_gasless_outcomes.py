"""gasless outcomes: standalone gasless calls, and what a failed request's failure was

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("gasless_executions") as batch:
        batch.add_column(
            sa.Column("standalone", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("requests") as batch:
        batch.add_column(
            sa.Column(
                "fail_details",
                sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("requests") as batch:
        batch.drop_column("fail_details")
    with op.batch_alter_table("gasless_executions") as batch:
        batch.drop_column("standalone")
