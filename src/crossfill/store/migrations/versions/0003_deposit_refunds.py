"""deposit refunds: status, transaction and amount of each deposit's refund

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deposits") as batch_op:
        batch_op.add_column(sa.Column("refund_status", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("refund_tx_hash", sa.String(length=66), nullable=True))
        batch_op.add_column(sa.Column("refund_amount", sa.String(length=78), nullable=True))
        batch_op.create_index(batch_op.f("ix_deposits_refund_status"), ["refund_status"])


def downgrade() -> None:
    with op.batch_alter_table("deposits") as batch_op:
        batch_op.drop_index(batch_op.f("ix_deposits_refund_status"))
        batch_op.drop_column("refund_amount")
        batch_op.drop_column("refund_tx_hash")
        batch_op.drop_column("refund_status")
