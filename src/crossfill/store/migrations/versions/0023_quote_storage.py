"""quote documents compressed with lz4 on PostgreSQL; an index of the requests that own a
deposit address

Every quote stores its ~8 kB answer in `requests.quote`; PostgreSQL compresses a value that
large before moving it to the TOAST table, with pglz unless the column says otherwise. pglz
was most of the server's CPU per quote: a backend inserting batches of ten bench rows spent
0.21-0.27 ms per row with pglz and 0.12-0.14 ms with lz4, for about the same WAL (5.4 against
5.7 kB per row; see docs/performance.md, 2026-11-26, PostgreSQL with two API processes).
Values already stored keep their compression (both read alike); only new ones use lz4.

lz4 needs PostgreSQL 14 or later built with it (`default_toast_compression` then lists it);
elsewhere, and on SQLite, this does nothing.

`ix_requests_open_deposit_addresses` holds only the requests that own a deposit address, which
the deposit-address sweeper lists at every new head; see `store.tables.Request`.

Revision ID: 0023
Revises: 0020
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0020"
branch_labels = None
depends_on = None


OPEN_DEPOSIT_ADDRESS = "deposit_address IS NOT NULL AND parent_request_id IS NULL"


def upgrade() -> None:
    if _server_offers_lz4():
        op.execute("ALTER TABLE requests ALTER COLUMN quote SET COMPRESSION lz4")
    op.create_index(
        "ix_requests_open_deposit_addresses",
        "requests",
        ["origin_chain_id", "created_at"],
        postgresql_where=sa.text(OPEN_DEPOSIT_ADDRESS),
        sqlite_where=sa.text(OPEN_DEPOSIT_ADDRESS),
    )


def downgrade() -> None:
    op.drop_index("ix_requests_open_deposit_addresses", table_name="requests")
    if _server_offers_lz4():
        op.execute("ALTER TABLE requests ALTER COLUMN quote SET COMPRESSION default")


def _server_offers_lz4() -> bool:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return False
    # No row before PostgreSQL 14 (no such setting); no 'lz4' among its values without lz4.
    offered = bind.scalar(
        sa.text(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
    )
    return bool(offered)
