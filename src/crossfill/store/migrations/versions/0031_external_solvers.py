"""external solvers: the registry of solvers asked for bids at quote time (their addresses per
chain kind, bid endpoint, routes, maximum size, reputation, cooldown), and a request's
exclusive solver with the end of its exclusivity

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    op.create_table(
        "solvers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("evm_address", sa.String(length=64), nullable=False),
        sa.Column("addresses", json, nullable=False),
        sa.Column("bid_url", sa.String(length=2000), nullable=False),
        sa.Column("routes", json, nullable=False),
        sa.Column("max_size_usd_micros", sa.BigInteger(), nullable=False),
        sa.Column("reputation", sa.Integer(), nullable=False),
        sa.Column("cooldown_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_solvers")),
        sa.UniqueConstraint("name", name=op.f("uq_solvers_name")),
        sa.UniqueConstraint("evm_address", name=op.f("uq_solvers_evm_address")),
    )
    with op.batch_alter_table("requests") as batch_op:
        batch_op.add_column(sa.Column("exclusive_solver", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("exclusivity_deadline", sa.DateTime(timezone=True), nullable=True)
        )
    where = sa.text("exclusive_solver IS NOT NULL")
    op.create_index(
        "ix_requests_exclusive_solver",
        "requests",
        ["exclusive_solver"],
        postgresql_where=where,
        sqlite_where=where,
    )


def downgrade() -> None:
    op.drop_index("ix_requests_exclusive_solver", table_name="requests")
    with op.batch_alter_table("requests") as batch_op:
        batch_op.drop_column("exclusivity_deadline")
        batch_op.drop_column("exclusive_solver")
    op.drop_table("solvers")
