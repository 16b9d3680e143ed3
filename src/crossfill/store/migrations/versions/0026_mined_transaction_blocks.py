"""mined transaction blocks: the hash of the block a journalled transaction was mined in, and
an index to find a signer's recently mined transactions (watched until final)

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sent_transactions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("block_hash", sa.String(length=66), nullable=True))
        batch_op.create_index(
            "ix_sent_transactions_mined",
            ["chain_id", "sender", "status", "block_number"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("sent_transactions", schema=None) as batch_op:
        batch_op.drop_index("ix_sent_transactions_mined")
        batch_op.drop_column("block_hash")
