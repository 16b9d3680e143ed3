"""requests: the columns a quote leaves empty indexed only where set; no status-only index

Every quote inserts a request row, and each index of `requests` is one more B-tree insert in
that transaction: on SQLite, inside the event loop's group commit. `api_key_id`,
`deposit_address`, `parent_request_id` and `origin_block_number` are empty in most new rows and
are only ever looked up by value (`=`, `IN`, ranges), which implies they are set: their
indexes now hold only the rows where they are, and a quote's insert skips them.
`ix_requests_status` repeated the first column of `ix_requests_status_created_at`. SQLite's work
per row of a batch of 16, on 20,000 rows: about 8% less (`python -m bench.quote_rows`, median
ratio to revision 0023, measured 2026-11-26; docs/performance.md, "Quotes on SQLite: fewer
indexes on a quote's insert").

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

WHEN_SET = ("api_key_id", "deposit_address", "parent_request_id", "origin_block_number")


def upgrade() -> None:
    op.drop_index("ix_requests_status", table_name="requests")
    for column in WHEN_SET:
        op.drop_index(f"ix_requests_{column}", table_name="requests")
        where = sa.text(f"{column} IS NOT NULL")
        op.create_index(
            f"ix_requests_{column}",
            "requests",
            [column],
            postgresql_where=where,
            sqlite_where=where,
        )


def downgrade() -> None:
    for column in WHEN_SET:
        op.drop_index(f"ix_requests_{column}", table_name="requests")
        op.create_index(f"ix_requests_{column}", "requests", [column])
    op.create_index("ix_requests_status", "requests", ["status"])
