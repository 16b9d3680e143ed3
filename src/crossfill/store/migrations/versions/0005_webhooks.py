"""webhooks: one endpoint per API key; outbox events carry their delivery state

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column(
            "api_key_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column(
            "headers",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("encrypted_key", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"],
            ["api_keys.id"],
            name=op.f("fk_webhook_endpoints_api_key_id_api_keys"),
        ),
        sa.PrimaryKeyConstraint("api_key_id", name=op.f("pk_webhook_endpoints")),
    )
    with op.batch_alter_table("outbox_events") as batch_op:
        batch_op.add_column(sa.Column("api_key_id", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("delivery", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(
            sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("last_error", sa.String(length=500), nullable=True))
        batch_op.create_index("ix_outbox_events_due", ["delivery", "next_attempt_at"])


def downgrade() -> None:
    with op.batch_alter_table("outbox_events") as batch_op:
        batch_op.drop_index("ix_outbox_events_due")
        for column in (
            "last_error",
            "delivered_at",
            "lease_expires_at",
            "next_attempt_at",
            "attempts",
            "delivery",
            "api_key_id",
        ):
            batch_op.drop_column(column)
    op.drop_table("webhook_endpoints")
