"""receiver deposits and transaction facts: where a deposit's funds went (the Depository, or
the solver through the Receiver for protocol v1), so its refund is paid from the right place;
and, per request transaction, who sent the funds in (a deposit's depositor) and what its fee was
worth when it was paid (for the record's actual fees)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deposits") as batch:
        batch.add_column(
            sa.Column("paid_to", sa.String(length=16), nullable=False, server_default="depository")
        )
    with op.batch_alter_table("request_transactions") as batch:
        batch.add_column(sa.Column("sender", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("fee_usd_micros", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("request_transactions") as batch:
        batch.drop_column("fee_usd_micros")
        batch.drop_column("sender")
    with op.batch_alter_table("deposits") as batch:
        batch.drop_column("paid_to")
