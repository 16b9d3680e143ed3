"""request lifecycle: requests, deposits, their transactions, cursors, outbox, tx journal

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chain_cursors",
        sa.Column("chain_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("block_number", sa.BigInteger(), nullable=False),
        sa.Column("block_hash", sa.String(length=66), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chain_id", "role", name=op.f("pk_chain_cursors")),
    )
    op.create_table(
        "requests",
        sa.Column("id", sa.String(length=66), nullable=False),
        sa.Column("order_id", sa.String(length=66), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("origin_chain_id", sa.BigInteger(), nullable=False),
        sa.Column("destination_chain_id", sa.BigInteger(), nullable=False),
        sa.Column("user_address", sa.String(length=64), nullable=False),
        sa.Column("recipient", sa.String(length=64), nullable=False),
        sa.Column("refund_to", sa.String(length=64), nullable=False),
        sa.Column("origin_currency", sa.String(length=64), nullable=False),
        sa.Column("destination_currency", sa.String(length=64), nullable=False),
        sa.Column("trade_type", sa.String(length=16), nullable=False),
        sa.Column("amount_in", sa.String(length=78), nullable=False),
        sa.Column("amount_out", sa.String(length=78), nullable=False),
        sa.Column("minimum_amount_out", sa.String(length=78), nullable=False),
        sa.Column("amount_in_usd_micros", sa.BigInteger(), nullable=False),
        sa.Column("explicit_deposit", sa.Boolean(), nullable=False),
        sa.Column(
            "quote",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("referrer", sa.String(length=200), nullable=True),
        sa.Column("api_key_id", sa.BigInteger(), nullable=True),
        sa.Column("fail_reason", sa.String(length=64), nullable=True),
        sa.Column("refund_fail_reason", sa.String(length=64), nullable=True),
        sa.Column("lease_owner", sa.String(length=100), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_requests")),
        sa.UniqueConstraint("order_id", name=op.f("uq_requests_order_id")),
    )
    with op.batch_alter_table("requests", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_requests_api_key_id"), ["api_key_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_requests_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_requests_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_requests_updated_at"), ["updated_at"], unique=False)

    op.create_table(
        "deposits",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=False),
        sa.Column("log_index", sa.Integer(), nullable=False),
        sa.Column("block_number", sa.BigInteger(), nullable=False),
        sa.Column("block_hash", sa.String(length=66), nullable=False),
        sa.Column("order_id", sa.String(length=66), nullable=False),
        sa.Column("depositor", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=True),
        sa.Column("outcome", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_deposits_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deposits")),
        sa.UniqueConstraint("chain_id", "tx_hash", "log_index", name=op.f("uq_deposits_chain_id")),
    )
    with op.batch_alter_table("deposits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_deposits_order_id"), ["order_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_deposits_request_id"), ["request_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_deposits_state"), ["state"], unique=False)

    op.create_table(
        "outbox_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_outbox_events_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox_events")),
    )
    with op.batch_alter_table("outbox_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_outbox_events_request_id"), ["request_id"], unique=False
        )

    op.create_table(
        "request_transactions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=False),
        sa.Column("block_number", sa.BigInteger(), nullable=True),
        sa.Column("fee", sa.String(length=78), nullable=True),
        sa.Column("timestamp", sa.BigInteger(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"],
            ["requests.id"],
            name=op.f("fk_request_transactions_request_id_requests"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_request_transactions")),
        sa.UniqueConstraint(
            "request_id", "kind", "tx_hash", name=op.f("uq_request_transactions_request_id")
        ),
    )
    with op.batch_alter_table("request_transactions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_request_transactions_request_id"), ["request_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_request_transactions_tx_hash"), ["tx_hash"], unique=False
        )

    op.create_table(
        "sent_transactions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("sender", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.BigInteger(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=True),
        sa.Column("tx_hash", sa.String(length=66), nullable=False),
        sa.Column("raw_transaction", sa.Text(), nullable=False),
        sa.Column("max_fee_per_gas", sa.String(length=78), nullable=False),
        sa.Column("max_priority_fee_per_gas", sa.String(length=78), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("block_number", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_sent_transactions_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sent_transactions")),
        sa.UniqueConstraint("chain_id", "tx_hash", name=op.f("uq_sent_transactions_chain_id")),
    )
    with op.batch_alter_table("sent_transactions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sent_transactions_request_id"), ["request_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_sent_transactions_status"), ["status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("sent_transactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sent_transactions_status"))
        batch_op.drop_index(batch_op.f("ix_sent_transactions_request_id"))

    op.drop_table("sent_transactions")
    with op.batch_alter_table("request_transactions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_request_transactions_tx_hash"))
        batch_op.drop_index(batch_op.f("ix_request_transactions_request_id"))

    op.drop_table("request_transactions")
    with op.batch_alter_table("outbox_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_outbox_events_request_id"))

    op.drop_table("outbox_events")
    with op.batch_alter_table("deposits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_deposits_state"))
        batch_op.drop_index(batch_op.f("ix_deposits_request_id"))
        batch_op.drop_index(batch_op.f("ix_deposits_order_id"))

    op.drop_table("deposits")
    with op.batch_alter_table("requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_requests_updated_at"))
        batch_op.drop_index(batch_op.f("ix_requests_status"))
        batch_op.drop_index(batch_op.f("ix_requests_created_at"))
        batch_op.drop_index(batch_op.f("ix_requests_api_key_id"))

    op.drop_table("requests")
    op.drop_table("chain_cursors")
