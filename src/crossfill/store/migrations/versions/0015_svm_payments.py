"""svm payments: the SVM payer's journal of signed transactions, written before sending

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "svm_payments",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("payment_key", sa.String(length=100), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("recipient", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("signature", sa.String(length=90), nullable=False),
        sa.Column("raw_transaction", sa.Text(), nullable=False),
        sa.Column("blockhash", sa.String(length=64), nullable=False),
        sa.Column("last_valid_block_height", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("slot", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_svm_payments")),
        sa.UniqueConstraint(
            "chain_id", "purpose", "payment_key", "attempt", name=op.f("uq_svm_payments_chain_id")
        ),
        sa.UniqueConstraint("signature", name=op.f("uq_svm_payments_signature")),
    )
    op.create_index(op.f("ix_svm_payments_status"), "svm_payments", ["status"])
    # Requests' transactions and deposits include SVM signatures (base58, up to 88 chars).
    _resize(("request_transactions", "tx_hash"), ("deposits", "tx_hash"),
            ("deposits", "refund_tx_hash"), old=66, new=90)  # fmt: skip


def _resize(*columns: tuple[str, str], old: int, new: int) -> None:
    for table, column in columns:
        with op.batch_alter_table(table) as batch_op:
            batch_op.alter_column(
                column, existing_type=sa.String(length=old), type_=sa.String(length=new)
            )


def downgrade() -> None:
    _resize(("request_transactions", "tx_hash"), ("deposits", "tx_hash"),
            ("deposits", "refund_tx_hash"), old=90, new=66)  # fmt: skip
    op.drop_index(op.f("ix_svm_payments_status"), table_name="svm_payments")
    op.drop_table("svm_payments")
