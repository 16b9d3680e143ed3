"""The bulk inserts' statements: independent of the row count, parents first."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect
from sqlalchemy.dialects.sqlite.aiosqlite import dialect as aiosqlite_dialect
from sqlalchemy.engine import Dialect

from crossfill.store.bulk_insert import PostgresBulkInsert, Row, SqliteBulkInsert
from crossfill.store.db import EncodedJson, json_text
from crossfill.store.requests import APP_FEES, REQUESTS

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _fee(request_id: str) -> Row:
    return (APP_FEES, {"request_id": request_id, "recipient": "0xaa", "bps": 10, "updated_at": NOW})


def _request(request_id: str) -> Row:
    return (REQUESTS, {"id": request_id, "quote": {"steps": []}, "created_at": NOW})


def _dialect() -> Dialect:
    """The dialect as the engine sets it up (crossfill.store.db.create_engine)."""
    return asyncpg_dialect(json_serializer=json_text)  # type: ignore[no-untyped-call]


def test_the_sql_depends_on_the_tables_and_columns_not_on_the_row_count() -> None:
    bulk = PostgresBulkInsert(_dialect())
    one_sql, one_arguments = bulk.statement([_request("0x1")])
    three_sql, three_arguments = bulk.statement([_request(f"0x{n}") for n in range(3)])
    assert one_sql == three_sql and one_sql.startswith("INSERT INTO requests")
    assert len(one_arguments) == len(three_arguments)
    assert ["0x0", "0x1", "0x2"] in three_arguments  # one array per column


def test_children_listed_first_are_inserted_after_their_parents() -> None:
    sql, arguments = PostgresBulkInsert(_dialect()).statement([_fee("0x1"), _request("0x1")])
    assert sql.index("INSERT INTO requests") < sql.index("INSERT INTO app_fees")
    # JSON goes through the column's own serialiser; omitted defaults are filled in
    assert ['{"steps":[]}'] in arguments and ["Bridge"] in arguments


def test_sqlite_rows_go_as_one_executemany_per_table_parents_first() -> None:
    dialect = aiosqlite_dialect(json_serializer=json_text)
    statements = SqliteBulkInsert(dialect).statements(
        [_fee("0x1"), _request("0x1"), _request("0x2")]
    )
    assert [sql.split("(")[0] for sql, _ in statements] == [
        "INSERT INTO requests ",
        "INSERT INTO app_fees ",
    ]
    requests_sql, request_rows = statements[0]
    assert requests_sql.count("?") == len(request_rows[0]) and len(request_rows) == 2
    # JSON through the engine's serialiser, datetimes as SQLite text, defaults filled in
    assert '{"steps":[]}' in request_rows[0] and "Bridge" in request_rows[0]
    assert all(not isinstance(value, datetime) for value in request_rows[0])


def test_an_encoded_document_is_stored_as_it_is() -> None:
    encoded = EncodedJson('{"steps":[],"fees":{"gas":"1"}}')
    values = {**_request("0x1")[1], "quote": encoded}
    for arguments in (
        PostgresBulkInsert(_dialect()).statement([(REQUESTS, values)])[1],
        SqliteBulkInsert(aiosqlite_dialect(json_serializer=json_text)).statements(
            [(REQUESTS, values)]
        )[0][1],
    ):
        assert [encoded] in arguments or encoded in arguments[0]
