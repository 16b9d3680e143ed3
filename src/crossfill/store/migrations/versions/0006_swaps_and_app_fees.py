"""swaps, app fees, sponsorship: a request's execution plan; app-fee shares per recipient;
API keys' sponsor wallets and the payments they owe

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("requests") as batch_op:
        batch_op.add_column(
            sa.Column(
                "plan",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=True,
            )
        )
    op.create_table(
        "app_fees",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("recipient", sa.String(length=64), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("bps", sa.Integer(), nullable=False),
        sa.Column("quoted_amount", sa.String(length=78), nullable=False),
        sa.Column("actual_amount", sa.String(length=78), nullable=True),
        sa.Column("amount_usd_micros", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_app_fees_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_app_fees")),
    )
    op.create_index(op.f("ix_app_fees_recipient"), "app_fees", ["recipient"])
    op.create_index(op.f("ix_app_fees_request_id"), "app_fees", ["request_id"])
    with op.batch_alter_table("api_keys") as batch_op:
        batch_op.add_column(sa.Column("sponsor_address", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("sponsor_chain_id", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("sponsor_currency", sa.String(length=64), nullable=True))
    op.create_table(
        "sponsor_payments",
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("sponsor", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("amount_usd_micros", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_sponsor_payments_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_sponsor_payments")),
    )
    op.create_index(op.f("ix_sponsor_payments_chain_id"), "sponsor_payments", ["chain_id"])
    op.create_index(op.f("ix_sponsor_payments_state"), "sponsor_payments", ["state"])


def downgrade() -> None:
    op.drop_index(op.f("ix_sponsor_payments_state"), table_name="sponsor_payments")
    op.drop_index(op.f("ix_sponsor_payments_chain_id"), table_name="sponsor_payments")
    op.drop_table("sponsor_payments")
    with op.batch_alter_table("api_keys") as batch_op:
        batch_op.drop_column("sponsor_currency")
        batch_op.drop_column("sponsor_chain_id")
        batch_op.drop_column("sponsor_address")
    op.drop_index(op.f("ix_app_fees_request_id"), table_name="app_fees")
    op.drop_index(op.f("ix_app_fees_recipient"), table_name="app_fees")
    op.drop_table("app_fees")
    with op.batch_alter_table("requests") as batch_op:
        batch_op.drop_column("plan")
