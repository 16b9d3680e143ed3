"""nonce mappings: a wallet's signed (wallet, nonce) -> request id, from POST /authorize

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "nonce_mappings",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("wallet", sa.String(length=64), nullable=False),
        sa.Column("nonce", sa.String(length=78), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("wallet_chain_id", sa.BigInteger(), nullable=False),
        sa.Column("depositor", sa.String(length=64), nullable=False),
        sa.Column("signature_chain_id", sa.BigInteger(), nullable=False),
        sa.Column("signature", sa.String(length=132), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_nonce_mappings_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nonce_mappings")),
        sa.UniqueConstraint("wallet", "nonce", name=op.f("uq_nonce_mappings_wallet")),
    )
    op.create_index(op.f("ix_nonce_mappings_request_id"), "nonce_mappings", ["request_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_nonce_mappings_request_id"), table_name="nonce_mappings")
    op.drop_table("nonce_mappings")
