"""New rows for several tables: grouped parents first, and on PostgreSQL sent as one statement.

`insert_parts` groups rows by table and by the columns they give, parents' tables first (both
backends insert in that order). `PostgresBulkInsert` makes one statement of them;
`SqliteBulkInsert` one `executemany` per table. A one-row
commit through SQLAlchemy's asyncpg adapter is three round trips (BEGIN, INSERT, COMMIT) and
about 0.5 ms of CPU; this statement runs alone, so PostgreSQL commits it by itself (0.2 ms).
Each table's rows travel as one array per column, expanded by `unnest`, and each table's INSERT
is a data-modifying CTE of the one statement; foreign keys are checked at the end of the
statement, so children may name parents inserted beside them. The SQL depends only on which
tables and columns appear, never on the number of rows, so a handful of statements are
compiled once (by SQLAlchemy, with the columns' own bind processing) and stay prepared.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, bindparam, func, insert, literal_column, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement, Select
from sqlalchemy.sql.compiler import SQLCompiler

from crossfill.store.tables import Base

Row = tuple[Table, Mapping[str, Any]]
# one INSERT's worth: a table, the columns its rows give, the rows
Part = tuple[Table, tuple[str, ...], list[Mapping[str, Any]]]
# (table, the columns its rows give) for each INSERT of a statement, parents first
Shape = tuple[tuple[Table, tuple[str, ...]], ...]
_TABLE_ORDER = {table.name: position for position, table in enumerate(Base.metadata.sorted_tables)}


@dataclass(frozen=True)
class _Parameter:
    part: int
    column: str
    process: Callable[[Any], Any] | None


@dataclass(frozen=True)
class _Compiled:
    sql: str
    parameters: tuple[_Parameter, ...]


class PostgresBulkInsert:
    """Compiles and caches the statement for each shape of rows."""

    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect
        self._compiled: dict[Shape, _Compiled] = {}

    def statement(self, rows: Sequence[Row]) -> tuple[str, list[Any]]:
        """The SQL and its positional arguments that insert `rows`."""
        parts = insert_parts(rows)
        shape = tuple((table, columns) for table, columns, _ in parts)
        compiled = self._compiled.get(shape)
        if compiled is None:
            compiled = self._compiled[shape] = self._compile(shape)
        arguments = []
        for parameter in compiled.parameters:
            _, _, values = parts[parameter.part]
            column = [row[parameter.column] for row in values]
            arguments.append(column if parameter.process is None else parameter.process(column))
        return compiled.sql, arguments

    def _compile(self, shape: Shape) -> _Compiled:
        processors: dict[str, _Parameter] = {}
        inserts = []
        for part, (table, columns) in enumerate(shape):
            arrays = []
            for column in columns:
                array = ARRAY(table.c[column].type)
                name = f"p{part}_{column}"
                arrays.append(bindparam(name, type_=array))
                process = array.dialect_impl(self._dialect).bind_processor(self._dialect)
                processors[name] = _Parameter(part, column, process)
            source = select(func.unnest(*arrays).table_valued(*columns).render_derived())
            inserts.append(insert(table).from_select(columns, source, include_defaults=False))
        statement: ClauseElement = inserts[0]
        if len(inserts) > 1:
            combined: Select[Any] = select(literal_column("1"))
            for part, table_insert in enumerate(inserts):
                combined = combined.add_cte(table_insert.cte(f"insert_{part}"))
            statement = combined
        compiled = statement.compile(dialect=self._dialect)
        assert isinstance(compiled, SQLCompiler) and compiled.positiontup is not None
        return _Compiled(compiled.string, tuple(processors[name] for name in compiled.positiontup))


class SqliteBulkInsert:
    """Each table's rows as one parametrised INSERT and its parameter tuples, for
    `executemany` on the driver's own connection (see `store.group_commit`). The SQL and the
    columns' bind processing (JSON through the engine's serialiser, datetimes as text) come
    from SQLAlchemy, compiled once per table and columns."""

    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect
        self._compiled: dict[tuple[Table, tuple[str, ...]], _SqliteInsert] = {}

    def statements(self, rows: Sequence[Row]) -> list[tuple[str, list[tuple[Any, ...]]]]:
        result = []
        for table, columns, values in insert_parts(rows):
            compiled = self._compiled.get((table, columns))
            if compiled is None:
                compiled = self._compiled[table, columns] = self._compile(table, columns)
            order = compiled.parameters
            result.append(
                (
                    compiled.sql,
                    [
                        tuple(
                            row[name] if process is None else process(row[name])
                            for name, process in order
                        )
                        for row in values
                    ],
                )
            )
        return result

    def _compile(self, table: Table, columns: tuple[str, ...]) -> _SqliteInsert:
        statement = insert(table).values(
            {name: bindparam(name, type_=table.c[name].type) for name in columns}
        )
        compiled = statement.compile(dialect=self._dialect)
        assert isinstance(compiled, SQLCompiler) and compiled.positiontup is not None
        # Defaults SQLAlchemy would compute per row in Python: none here (scalar ones are
        # filled in by insert_parts), or the rows would need them.
        assert not compiled.insert_prefetch, compiled.insert_prefetch
        parameters = tuple(
            (
                name,
                table.c[name].type.dialect_impl(self._dialect).bind_processor(self._dialect),
            )
            for name in compiled.positiontup
        )
        return _SqliteInsert(compiled.string, parameters)


@dataclass(frozen=True)
class _SqliteInsert:
    sql: str
    parameters: tuple[tuple[str, Callable[[Any], Any] | None], ...]


def insert_parts(rows: Sequence[Row]) -> list[Part]:
    """Rows grouped by table and by the columns they give, parents' tables first. A column a
    row leaves out takes its scalar Python default, as an ORM insert would."""
    groups: dict[tuple[Table, tuple[str, ...]], list[Mapping[str, Any]]] = {}
    for table, values in rows:
        complete = _with_defaults(table, values)
        groups.setdefault((table, tuple(complete)), []).append(complete)
    ordered = sorted(groups.items(), key=lambda item: _TABLE_ORDER[item[0][0].name])
    return [(table, columns, values) for (table, columns), values in ordered]


def _with_defaults(table: Table, values: Mapping[str, Any]) -> Mapping[str, Any]:
    defaults = _scalar_defaults(table)
    return values if defaults.keys() <= values.keys() else {**defaults, **values}


@functools.cache
def _scalar_defaults(table: Table) -> dict[str, Any]:
    return {
        column.name: column.default.arg  # type: ignore[attr-defined]
        for column in table.columns
        if column.default is not None and column.default.is_scalar
    }
