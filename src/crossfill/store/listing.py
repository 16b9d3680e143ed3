"""The listing filter compiler: a `ListingQuery` → one SQL statement over `requests`.

Every condition compiles to a null-safe boolean (never SQL NULL), so `not:` means exactly "does
not match". Transaction-hash fields are `id IN (subquery)` on the indexed
`request_transactions.tx_hash`; `term` is a union of index lookups. Paging is keyset:
`(sort column, id)` strictly after the cursor, so inserts during a walk neither repeat nor
skip a record that was there when the walk started.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    false,
    func,
    literal,
    not_,
    or_,
    select,
    true,
    tuple_,
    union,
)
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.enums import features_mask, features_of
from crossfill.domain.listing_query import Condition, Cursor, ListingQuery, SortBy
from crossfill.domain.record_facts import (
    AppFeeFacts,
    CurrencyObjects,
    GasSponsorFacts,
    Moved,
    RecordFacts,
    SolverFacts,
    TxFacts,
)
from crossfill.store import gasless_executions
from crossfill.store.api_keys import iso, key_hash
from crossfill.store.db import as_utc
from crossfill.store.requests import deposit_address_facts
from crossfill.store.tables import ApiKey, AppFee, GaslessExecution, Request, RequestTransaction

R, T = Request, RequestTransaction
SORT_COLUMNS = {
    SortBy.CREATED_AT: R.created_at,
    SortBy.UPDATED_AT: R.updated_at,
    SortBy.AMOUNT_USD: R.amount_in_usd_micros,
}


def _in(column: Any, values: tuple[str | int, ...]) -> ColumnElement[bool]:
    return and_(column.is_not(None), column.in_(values))


def _with_tx(values: tuple[str | int, ...], *kinds: str) -> ColumnElement[bool]:
    hashes = select(T.request_id).where(T.tx_hash.in_(values))
    if kinds:
        hashes = hashes.where(T.kind.in_(kinds))
    return R.id.in_(hashes)


def _term(values: tuple[str | int, ...]) -> ColumnElement[bool]:
    matches = union(
        select(R.id).where(R.id.in_(values)),
        select(R.id).where(R.user_address.in_(values)),
        select(R.id).where(R.recipient.in_(values)),
        select(R.id).where(R.deposit_address.in_(values)),
        select(T.request_id).where(T.tx_hash.in_(values)),
    )
    return R.id.in_(matches)


def _matches(condition: Condition) -> ColumnElement[bool]:  # noqa: C901 - one case per field
    v = condition.values
    match condition.field:
        case "term":
            return _term(v)
        case "id":
            return R.id.in_(v)
        case "orderId":
            return R.order_id.in_(v)
        case "depositTxHash":
            return _with_tx(v, "deposit")
        case "fillTxHash":
            return _with_tx(v, "fill")
        case "refundTxHash":
            return _with_tx(v, "refund")
        case "hash":  # v2: origin or destination transaction
            return _with_tx(v, "deposit", "fill")
        case "user":
            return R.user_address.in_(v)
        case "recipient":
            return R.recipient.in_(v)
        case "depositAddress":
            return _in(R.deposit_address, v)
        case "originChainId" | "currencyInChainId":
            return R.origin_chain_id.in_(v)
        case "destinationChainId" | "currencyOutChainId":
            return R.destination_chain_id.in_(v)
        case "chainId":
            return or_(R.origin_chain_id.in_(v), R.destination_chain_id.in_(v))
        case "currencyInAddress":
            return R.origin_currency.in_(v)
        case "currencyOutAddress":
            return R.destination_currency.in_(v)
        case "currencyInSymbol":
            return func.upper(R.currency_in_symbol).in_(v)
        case "currencyOutSymbol":
            return func.upper(R.currency_out_symbol).in_(v)
        case "status":
            return R.status.in_(v)
        case "failReason":
            return _in(R.fail_reason, v)
        case "refundFailReason":
            return _in(R.refund_fail_reason, v)
        case "requestType":
            return R.request_type.in_(v)
        case "referrer":
            return _in(R.referrer, v)
        case "apiKey":
            keys = select(ApiKey.id).where(ApiKey.key_hash.in_([key_hash(str(k)) for k in v]))
            return and_(R.api_key_id.is_not(None), R.api_key_id.in_(keys))
    raise AssertionError(f"no compiler for field {condition.field}")


def _condition(condition: Condition) -> ColumnElement[bool]:
    clause = _matches(condition)
    return not_(clause) if condition.negated else clause


def _at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _ranges(ranges: dict[str, int]) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = []
    bounds = {
        "startBlock": (R.origin_block_number, ">="),
        "endBlock": (R.origin_block_number, "<="),
        "amountUsdMin": (R.amount_in_usd_micros, ">="),
        "amountUsdMax": (R.amount_in_usd_micros, "<="),
        "appFeesAmountUsdMin": (R.app_fees_usd_micros, ">="),
        "appFeesAmountUsdMax": (R.app_fees_usd_micros, "<="),
        "fillTimeMin": (R.fill_time_seconds, ">="),
        "fillTimeMax": (R.fill_time_seconds, "<="),
    }
    for name, bound in ranges.items():
        if name == "startTimestamp":
            clauses.append(R.created_at >= _at(bound))
        elif name == "endTimestamp":  # inclusive of the whole second
            clauses.append(R.created_at < _at(bound) + timedelta(seconds=1))
        else:
            column, operator = bounds[name]
            clauses.append(column >= bound if operator == ">=" else column <= bound)
    return clauses


def _with_children(condition: Condition) -> ColumnElement[bool]:
    """`includeChildRequests` with `id`: the request and the children of that request."""
    if condition.field == "id" and not condition.negated:
        return or_(R.id.in_(condition.values), R.parent_request_id.in_(condition.values))
    return _condition(condition)


def where_clauses(query: ListingQuery) -> list[ColumnElement[bool]]:
    if query.include_child_requests:
        clauses = [_with_children(c) for c in query.conditions]
    else:
        # A child request (a later transfer to a deposit address) is listed only on demand.
        clauses = [_condition(c) for c in query.conditions]
        clauses.append(R.parent_request_id.is_(None))
    if query.groups:
        clauses.append(or_(*(and_(true(), *map(_condition, group)) for group in query.groups)))
    clauses.extend(_ranges(dict(query.ranges)))
    if query.features:
        mask = features_mask(query.features)
        clauses.append(R.features_mask.op("&")(literal(mask)) == mask)
    return clauses


def cursor_value(query: ListingQuery, row: Request) -> str | int:
    if query.sort_by is SortBy.AMOUNT_USD:
        return row.amount_in_usd_micros
    moment = row.created_at if query.sort_by is SortBy.CREATED_AT else row.updated_at
    return as_utc(moment).isoformat()


def _after(query: ListingQuery, cursor: Cursor) -> ColumnElement[bool]:
    column = SORT_COLUMNS[query.sort_by]
    value: object = cursor.value
    if query.sort_by is not SortBy.AMOUNT_USD:
        try:
            value = datetime.fromisoformat(str(cursor.value))
        except ValueError:
            return false()
    key = tuple_(column, R.id)
    bound = tuple_(literal(value, column.type), literal(cursor.request_id))
    return key < bound if query.direction == "desc" else key > bound


def page_statement(query: ListingQuery) -> Select[Any]:
    """One page plus one row (to know whether there is a next page)."""
    column = SORT_COLUMNS[query.sort_by]
    clauses = where_clauses(query)
    if query.cursor is not None:
        clauses.append(_after(query, query.cursor))
    order = (column.desc(), R.id.desc()) if query.direction == "desc" else (column, R.id)
    return select(R).where(*clauses).order_by(*order).limit(query.limit + 1)


async def page(session: AsyncSession, query: ListingQuery) -> tuple[list[Request], str | None]:
    rows = list(await session.scalars(page_statement(query)))
    if len(rows) <= query.limit:
        return rows, None
    rows = rows[: query.limit]
    last = rows[-1]
    cursor = Cursor(query.sort_by, query.direction, cursor_value(query, last), last.id)
    return rows, cursor.encode()


async def total(session: AsyncSession, query: ListingQuery) -> int:
    count = await session.scalar(select(func.count()).select_from(R).where(*where_clauses(query)))
    return int(count or 0)


async def transactions_by_request(
    session: AsyncSession, request_ids: list[str]
) -> dict[str, list[RequestTransaction]]:
    return await _rows_by_request(session, RequestTransaction, request_ids)


async def app_fees_by_request(
    session: AsyncSession, request_ids: list[str]
) -> dict[str, list[AppFee]]:
    return await _rows_by_request(session, AppFee, request_ids)


_RequestChild = TypeVar("_RequestChild", RequestTransaction, AppFee)


async def _rows_by_request(
    session: AsyncSession, table: type[_RequestChild], request_ids: list[str]
) -> dict[str, list[_RequestChild]]:
    """Each request's rows of `table`, in the order they were written (none: an empty list)."""
    found: dict[str, list[_RequestChild]] = {request_id: [] for request_id in request_ids}
    if request_ids:
        rows = await session.scalars(
            select(table).where(table.request_id.in_(request_ids)).order_by(table.id)
        )
        for row in rows:
            found[row.request_id].append(row)
    return found


async def gas_sponsors_by_request(
    session: AsyncSession, request_ids: list[str]
) -> dict[str, GasSponsorFacts]:
    """The gasless executions (POST /execute) among these requests, as record facts."""
    if not request_ids:
        return {}
    rows = await session.scalars(
        select(GaslessExecution).where(GaslessExecution.request_id.in_(request_ids))
    )
    return {
        row.request_id: GasSponsorFacts(
            sponsor=row.sponsor,
            chain_id=row.chain_id,
            spent_wei=row.spent_wei,
            subsidized=row.subsidized,
            to=row.to_address,
            data=row.call_data,
            value=row.value,
            reverted=row.state == gasless_executions.REVERTED,
        )
        for row in rows
    }


def record_facts(
    row: Request,
    transactions: list[RequestTransaction],
    app_fees: list[AppFee],
    solver: SolverFacts,
    *,
    referrer: str | None,
    currencies: CurrencyObjects,
    gas_sponsor: GasSponsorFacts | None = None,
) -> RecordFacts:
    """The shaping input of one listed request (`referrer` only if the caller may see it)."""
    return RecordFacts(
        request_id=row.id,
        status=row.status,
        user=row.user_address,
        recipient=row.recipient,
        refund_to=row.refund_to,
        request_type=row.request_type,
        features=features_of(row.features_mask),
        fail_reason=row.fail_reason,
        refund_fail_reason=row.refund_fail_reason,
        amount_out=int(row.amount_out),
        minimum_amount_out=int(row.minimum_amount_out),
        deposit_address=deposit_address_facts(row),
        referrer=referrer,
        quote=row.quote,
        solver=solver,
        transactions=[_tx_facts(tx) for tx in transactions],
        app_fees=[
            AppFeeFacts(
                recipient=fee.recipient,
                bps=fee.bps,
                quoted_amount=int(fee.quoted_amount),
                actual_amount=None if fee.actual_amount is None else int(fee.actual_amount),
                amount_usd_micros=fee.amount_usd_micros,
            )
            for fee in app_fees
        ],
        created_at=iso(row.created_at),
        updated_at=iso(row.updated_at),
        plan=row.plan,
        currencies=currencies,
        gas_sponsor=gas_sponsor,
        fail_details=row.fail_details,
    )


def _tx_facts(tx: RequestTransaction) -> TxFacts:
    moved = None
    if tx.amount is not None and tx.currency is not None:
        moved = Moved(tx.currency, int(tx.amount), tx.amount_usd_micros)
    return TxFacts(
        kind=tx.kind,
        chain_id=tx.chain_id,
        tx_hash=tx.tx_hash,
        block_number=tx.block_number,
        fee=tx.fee,
        timestamp=tx.timestamp,
        status=tx.status,
        moved=moved,
        fee_usd_micros=tx.fee_usd_micros,
        sender=tx.sender,
        recorded_at=as_utc(tx.created_at),
    )
