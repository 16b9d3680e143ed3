"""solver fades: an external solver's consecutive fades, each fade's cooldown and the debit of
its bond for the fallback's extra cost, and the operator's own output of a quote a solver won

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("solvers") as batch_op:
        batch_op.add_column(
            sa.Column("consecutive_fades", sa.Integer(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("requests") as batch_op:
        batch_op.add_column(sa.Column("operator_amount_out", sa.String(length=78), nullable=True))
    op.create_table(
        "solver_fades",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("solver_id", sa.BigInteger(), nullable=False),
        sa.Column("solver_address", sa.String(length=64), nullable=False),
        sa.Column("request_id", sa.String(length=66), nullable=False),
        sa.Column("chain_id", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(length=64), nullable=False),
        sa.Column("cost", sa.String(length=78), nullable=False),
        sa.Column("debited", sa.String(length=78), nullable=True),
        sa.Column("consecutive", sa.Integer(), nullable=False),
        sa.Column("cooldown_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("tx_hash", sa.String(length=66), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["request_id"], ["requests.id"], name=op.f("fk_solver_fades_request_id_requests")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_solver_fades")),
        sa.UniqueConstraint("request_id", name=op.f("uq_solver_fades_request_id")),
    )
    op.create_index("ix_solver_fades_chain_state", "solver_fades", ["chain_id", "state"])
    op.create_index(op.f("ix_solver_fades_solver_id"), "solver_fades", ["solver_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_solver_fades_solver_id"), table_name="solver_fades")
    op.drop_index("ix_solver_fades_chain_state", table_name="solver_fades")
    op.drop_table("solver_fades")
    with op.batch_alter_table("requests") as batch_op:
        batch_op.drop_column("operator_amount_out")
    with op.batch_alter_table("solvers") as batch_op:
        batch_op.drop_column("consecutive_fades")
