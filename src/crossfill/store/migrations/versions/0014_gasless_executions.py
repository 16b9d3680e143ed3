"""gasless executions: calls a key's gas sponsor sends for a request (POST /execute)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gasless_executions",
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("api_key_id", sa.BigInteger(), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("sponsor", sa.String(length=64), nullable=False),
        sa.Column("to_address", sa.String(length=64), nullable=False),
        sa.Column("call_data", sa.Text(), nullable=False),
        sa.Column("value", sa.String(length=78), nullable=False),
        sa.Column(
            "authorization_list",
            sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
            nullable=False,
        ),
        sa.Column("gas_limit", sa.BigInteger(), nullable=False),
        sa.Column("reserved_wei", sa.BigInteger(), nullable=False),
        sa.Column("spent_wei", sa.BigInteger(), nullable=True),
        sa.Column("subsidized", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_gasless_executions_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_gasless_executions")),
    )
    op.create_index(op.f("ix_gasless_executions_api_key_id"), "gasless_executions", ["api_key_id"])
    op.create_index(
        "ix_gasless_executions_chain_state", "gasless_executions", ["chain_id", "state"]
    )


def downgrade() -> None:
    op.drop_index("ix_gasless_executions_chain_state", table_name="gasless_executions")
    op.drop_index(op.f("ix_gasless_executions_api_key_id"), table_name="gasless_executions")
    op.drop_table("gasless_executions")
