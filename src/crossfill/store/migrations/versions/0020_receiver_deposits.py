"""receiver deposits: where a deposit's funds went (the Depository, or the solver through the
Receiver for protocol v1), so its refund is paid from the right place

Revision ID: 0020
Revises: 0015
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deposits") as batch:
        batch.add_column(
            sa.Column("paid_to", sa.String(length=16), nullable=False, server_default="depository")
        )


def downgrade() -> None:
    with op.batch_alter_table("deposits") as batch:
        batch.drop_column("paid_to")
