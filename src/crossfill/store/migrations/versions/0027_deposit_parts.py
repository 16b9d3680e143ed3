"""deposit parts: an accepted deposit's excess over its quote split off as a part of its own
(unique by chain, tx, log index and part), and why a deposit's refund was skipped

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deposits", schema=None) as batch_op:
        batch_op.add_column(sa.Column("part", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("refund_fail_reason", sa.String(length=64), nullable=True))
        batch_op.drop_constraint("uq_deposits_chain_id", type_="unique")
        batch_op.create_unique_constraint(
            "uq_deposits_chain_id", ["chain_id", "tx_hash", "log_index", "part"]
        )
    # Refunds skipped before the reason was kept were skipped as too small to return.
    op.execute(
        "UPDATE deposits SET refund_fail_reason = 'AMOUNT_TOO_LOW_TO_REFUND' "
        "WHERE refund_status = 'skipped'"
    )


def downgrade() -> None:
    op.execute("DELETE FROM deposits WHERE part <> 0")
    with op.batch_alter_table("deposits", schema=None) as batch_op:
        batch_op.drop_constraint("uq_deposits_chain_id", type_="unique")
        batch_op.create_unique_constraint(
            "uq_deposits_chain_id", ["chain_id", "tx_hash", "log_index"]
        )
        batch_op.drop_column("refund_fail_reason")
        batch_op.drop_column("part")
