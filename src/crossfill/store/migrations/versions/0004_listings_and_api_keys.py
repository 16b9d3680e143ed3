"""listings and API keys: api_keys, the request columns /requests filters on, keyset indexes

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

SERIAL_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
LISTING_INDEXES = {
    "ix_requests_created_at_id": ["created_at", "id"],
    "ix_requests_updated_at_id": ["updated_at", "id"],
    "ix_requests_amount_usd_id": ["amount_in_usd_micros", "id"],
    "ix_requests_user_created_at": ["user_address", "created_at"],
    "ix_requests_recipient_created_at": ["recipient", "created_at"],
    "ix_requests_status_created_at": ["status", "created_at"],
    "ix_requests_origin_created_at": ["origin_chain_id", "created_at"],
    "ix_requests_destination_created_at": ["destination_chain_id", "created_at"],
}


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", SERIAL_ID, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    with op.batch_alter_table("requests") as batch_op:
        batch_op.add_column(
            sa.Column("request_type", sa.String(length=32), nullable=False, server_default="Bridge")
        )
        batch_op.add_column(
            sa.Column("currency_in_symbol", sa.String(length=32), nullable=False, server_default="")
        )
        batch_op.add_column(
            sa.Column(
                "currency_out_symbol", sa.String(length=32), nullable=False, server_default=""
            )
        )
        batch_op.add_column(
            sa.Column("features_mask", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch_op.add_column(
            sa.Column("app_fees_usd_micros", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("deposit_address", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("origin_block_number", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("fill_time_seconds", sa.BigInteger(), nullable=True))
        batch_op.drop_index("ix_requests_created_at")
        batch_op.drop_index("ix_requests_updated_at")
        batch_op.create_index(batch_op.f("ix_requests_deposit_address"), ["deposit_address"])
        batch_op.create_index(
            batch_op.f("ix_requests_origin_block_number"), ["origin_block_number"]
        )
        for name, columns in LISTING_INDEXES.items():
            batch_op.create_index(name, columns)


def downgrade() -> None:
    with op.batch_alter_table("requests") as batch_op:
        for name in LISTING_INDEXES:
            batch_op.drop_index(name)
        batch_op.drop_index(batch_op.f("ix_requests_origin_block_number"))
        batch_op.drop_index(batch_op.f("ix_requests_deposit_address"))
        batch_op.create_index("ix_requests_updated_at", ["updated_at"])
        batch_op.create_index("ix_requests_created_at", ["created_at"])
        for column in (
            "fill_time_seconds",
            "origin_block_number",
            "deposit_address",
            "app_fees_usd_micros",
            "features_mask",
            "currency_out_symbol",
            "currency_in_symbol",
            "request_type",
        ):
            batch_op.drop_column(column)
    op.drop_table("api_keys")
