"""app-fee claims: a recipient's signed claim of its owed shares, paid out on chain

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "app_fee_claims",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("claim_id", sa.String(length=66), nullable=False),
        sa.Column("wallet", sa.String(length=64), nullable=False),
        sa.Column("recipient", sa.String(length=64), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.String(length=78), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_app_fee_claims")),
        sa.UniqueConstraint("claim_id", name=op.f("uq_app_fee_claims_claim_id")),
    )
    op.create_index(op.f("ix_app_fee_claims_wallet"), "app_fee_claims", ["wallet"])
    op.create_index(op.f("ix_app_fee_claims_state"), "app_fee_claims", ["state"])
    with op.batch_alter_table("app_fees") as batch_op:
        batch_op.add_column(sa.Column("claim_id", sa.BigInteger(), nullable=True))
        batch_op.create_index(batch_op.f("ix_app_fees_claim_id"), ["claim_id"])
        batch_op.create_foreign_key(
            batch_op.f("fk_app_fees_claim_id_app_fee_claims"),
            "app_fee_claims",
            ["claim_id"],
            ["id"],
        )


def downgrade() -> None:
    with op.batch_alter_table("app_fees") as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_app_fees_claim_id_app_fee_claims"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_app_fees_claim_id"))
        batch_op.drop_column("claim_id")
    op.drop_index(op.f("ix_app_fee_claims_state"), table_name="app_fee_claims")
    op.drop_index(op.f("ix_app_fee_claims_wallet"), table_name="app_fee_claims")
    op.drop_table("app_fee_claims")
