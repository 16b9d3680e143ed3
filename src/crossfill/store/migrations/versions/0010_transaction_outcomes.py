"""transaction outcomes: what each deposit, fill and refund moved, as seen on chain

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("request_transactions") as batch_op:
        batch_op.add_column(sa.Column("amount", sa.String(78), nullable=True))
        batch_op.add_column(sa.Column("currency", sa.String(64), nullable=True))
        batch_op.add_column(sa.Column("amount_usd_micros", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("request_transactions") as batch_op:
        batch_op.drop_column("amount_usd_micros")
        batch_op.drop_column("currency")
        batch_op.drop_column("amount")
