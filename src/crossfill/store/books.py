"""Repository of the books (`tables.LedgerEntry`): each money event's postings
(`domain.books`), written in the caller's transaction, the one that records the event; and the
accounts' balances. The caller owns the transaction.

Events are keyed (`deposit:<chain>:<tx>:<log>`, `owed:<request>` (its deposit owed to the
solver, or earned at its fill when a solver account holds it), `fill:<request>` (what its fill
spent: posted by the EVM journal's mined fill, or by another kind's payer as its payment is
settled paid), `refund:<deposit>`, `repay:<repayment>`,
`claim:<claim>`, `sponsor:<request>`, `gas:<chain>:<tx>`, `transfer:<chain>:<tx>`,
`opening:<chain>:<currency>:<account>`) and each is posted once: a key already posted is not
posted again (a reorg's reversal brings a deposit's key back to zero, so the deposit, found
again, is posted again)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain import books
from crossfill.domain.books import Posting
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.fill_plan import FillPlan, FillPlanError
from crossfill.domain.repayments import SENDING
from crossfill.domain.status import RequestStatus
from crossfill.store import app_fees
from crossfill.store.tables import (
    AppFeeClaim,
    ChainCursor,
    Deposit,
    LedgerEntry,
    RebalanceMove,
    Repayment,
    Request,
    SentTransaction,
    SolverFade,
    SponsorPayment,
)
from crossfill.types import NATIVE_EVM_ADDRESS

FILL_PURPOSE = "fill"
SPONSOR_PURPOSE = "sponsor"
# The store's own names, spelled here: `store.deposits` (WHOLE, REORGED, WATCH_START) and
# `store.app_fee_claims` (SUBMITTED) import modules that post here.
_WHOLE = 0
_REORGED = "reorged"
_WATCH_START = "watch_start"
_CLAIM_SUBMITTED = "submitted"

Balances = dict[tuple[int, str, str], int]


async def post(
    session: AsyncSession, event: str, postings: Iterable[Posting], *, now: datetime
) -> None:
    for posting in books.balanced(postings):
        session.add(
            LedgerEntry(
                event=event,
                chain_id=posting.chain_id,
                currency=posting.currency.lower(),
                account=posting.account,
                amount=str(posting.amount),
                created_at=now,
            )
        )


async def net_of(session: AsyncSession, event: str) -> list[Posting]:
    """What the event's postings add up to, per account (those at zero left out)."""
    sums: dict[tuple[int, str, str], int] = defaultdict(int)
    for chain_id, currency, account, amount in await session.execute(
        select(
            LedgerEntry.chain_id, LedgerEntry.currency, LedgerEntry.account, LedgerEntry.amount
        ).where(LedgerEntry.event == event)
    ):
        sums[(chain_id, currency, account)] += int(amount)
    return [Posting(*where, amount) for where, amount in sums.items() if amount != 0]


async def _posted(session: AsyncSession, event: str) -> bool:
    found = await session.scalar(
        select(func.count()).select_from(LedgerEntry).where(LedgerEntry.event == event)
    )
    return bool(found)


async def _hold(session: AsyncSession, event: str) -> None:
    """Hold the event's key until the transaction ends, so two transactions posting it once go
    one after the other (PostgreSQL; SQLite has one writer): the second sees the first's."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:event, 0))"), {"event": event}
        )


async def _post_once(
    session: AsyncSession, event: str, postings: Iterable[Posting], *, now: datetime
) -> None:
    await _hold(session, event)
    if not await _posted(session, event):
        await post(session, event, postings, now=now)


def deposit_event(deposit: Deposit) -> str:
    return f"deposit:{deposit.chain_id}:{deposit.tx_hash}:{deposit.log_index}"


async def deposited(
    session: AsyncSession,
    deposit: Deposit,
    amount: int,
    holder: str,
    *,
    now: datetime,
    fresh: bool = False,
) -> None:
    """A deposit confirmed, `amount` as its chain logged it (all its parts), held by `holder`
    (`domain.books.DEPOSITORY`, or the key a v1 deposit was forwarded to). Posted unless it
    stands posted already (a deposit judged again after a reorg took it out and back).
    `fresh`: its row is stored by this very transaction (its log unique), so nothing stands
    posted for it: nothing is read."""
    event = deposit_event(deposit)
    if not fresh:
        await _hold(session, event)
        if await net_of(session, event):
            return
    await post(
        session, event, books.deposited(deposit.chain_id, deposit.currency, amount, holder),
        now=now,
    )  # fmt: skip
    request = None if deposit.request_id is None else await session.get(Request, deposit.request_id)
    if request is not None and request.status == RequestStatus.SUCCESS:
        await _owe_deposit(session, request, now=now)  # filled before its deposit was final


async def reverse(session: AsyncSession, event: str, *, now: datetime) -> None:
    """Undo what an event posted (a confirmed deposit a reorg took out of the chain)."""
    await post(session, event, books.reversed_(await net_of(session, event)), now=now)


async def follow_status(session: AsyncSession, request: Request, *, now: datetime) -> None:
    """A request that succeeded is filled: its deposit in the Depository is owed to the
    solver now (less its app fees), and the solver key paid its fill on the destination."""
    if request.status != RequestStatus.SUCCESS:
        return
    await _owe_deposit(session, request, now=now)
    await _post_once(session, f"fill:{request.id}", await _fill_spent(session, request), now=now)


async def _owe_deposit(session: AsyncSession, request: Request, *, now: datetime) -> None:
    """The filled request's deposit owed to the solver, once the books hold it: at the fill,
    or at the deposit's confirmation when the order was filled first (a fast fill)."""
    deposit = await session.scalar(
        select(Deposit).where(
            Deposit.request_id == request.id,
            Deposit.outcome == DepositVerdict.ACCEPTED,
            Deposit.part == _WHOLE,
            Deposit.state != _REORGED,
        )
    )
    if deposit is None or deposit.chain_id == request.destination_chain_id:
        return
    holder = _holder(await net_of(session, deposit_event(deposit)))
    if holder is None:
        return  # not in the books (yet)
    await _post_once(
        session,
        f"owed:{request.id}",
        _deposit_filled(deposit, holder, sum(await app_fees.app_fee_shares(session, deposit))),
        now=now,
    )


def _holder(posted: Iterable[Posting]) -> str | None:
    """The account a deposit's postings say holds it (the Depository, or a key of the
    service's: a v1 deposit's solver key, the SVM vault, the solver's exchange account)."""
    return next(
        (p.account for p in posted if p.amount > 0 and p.account != books.OWED_TO_USERS), None
    )


def _deposit_filled(deposit: Deposit, holder: str, fees: int) -> tuple[Posting, ...]:
    amount = int(deposit.amount)
    if holder == books.DEPOSITORY:
        return books.filled((deposit.chain_id, deposit.currency, amount), fees, None, None)
    return books.earned(deposit.chain_id, deposit.currency, amount)


async def _fill_spent(session: AsyncSession, request: Request) -> list[Posting]:
    """What the request's mined fill took from the solver key that sent it (its plan's spend,
    and the native value it sent beside a token); nothing for a fill the journal did not send
    (another kind's chain)."""
    if request.fill_plan is None:
        return []
    sender = await _mined_sender(session, request.id, FILL_PURPOSE)
    if sender is None:
        return []
    try:
        plan = FillPlan.from_json(request.fill_plan)
    except FillPlanError:
        return []
    chain_id = request.destination_chain_id
    spent = books.filled(None, 0, (chain_id, plan.spends_currency, plan.spends_amount), sender)
    if plan.spends_currency.lower() != NATIVE_EVM_ADDRESS and plan.value > 0:
        spent += books.filled(None, 0, (chain_id, NATIVE_EVM_ADDRESS, plan.value), sender)
    return list(spent)


async def refunded(
    session: AsyncSession, deposit: Deposit, paid: int, holder: str, *, now: datetime
) -> None:
    """A deposit part paid back, `paid` of it, by `holder`."""
    await _post_once(
        session,
        refund_event(deposit),
        books.refunded(deposit.chain_id, deposit.currency, int(deposit.amount), paid, holder),
        now=now,
    )


async def repaid(
    session: AsyncSession, repayment: Repayment, *, now: datetime, external: bool = False
) -> None:
    """A deposit owed to the solver repaid to it out of the Depository (`external`: to the
    external solver that filled its order, not to a key of the service's)."""
    amount = int(repayment.amount)
    postings = (
        books.repaid_to_external_solver(repayment.chain_id, repayment.currency, amount)
        if external
        else books.repaid(repayment.chain_id, repayment.currency, amount, repayment.recipient)
    )
    await _post_once(session, f"repay:{repayment.id}", postings, now=now)


async def fade_debited(
    session: AsyncSession, fade: SolverFade, solver: str, *, now: datetime
) -> None:
    """A faded solver's bond debited to the solver key (once per fade)."""
    await _post_once(
        session,
        f"fade:{fade.id}",
        books.fade_debited(fade.chain_id, fade.currency, int(fade.debited or 0), solver),
        now=now,
    )


def move_out_event(move: RebalanceMove) -> str:
    return f"rebalance-out:{move.id}"


async def rebalanced_out(
    session: AsyncSession, move: RebalanceMove, solver: str, *, now: datetime
) -> None:
    """A move's deposit mined on its origin (once)."""
    await _post_once(
        session,
        move_out_event(move),
        books.rebalanced_out(move.origin_chain_id, move.currency_in, int(move.amount), solver),
        now=now,
    )


async def rebalanced_in(
    session: AsyncSession, move: RebalanceMove, solver: str, fee: int, *, now: datetime
) -> None:
    """A move arrived (once; after its rebalance out, which it posts first if not yet)."""
    await rebalanced_out(session, move, solver, now=now)
    await _post_once(
        session,
        f"rebalance-in:{move.id}",
        books.rebalanced_in(
            (move.origin_chain_id, move.currency_in, int(move.amount)),
            fee,
            (move.destination_chain_id, move.currency_out, int(move.amount_out)),
            solver,
        ),
        now=now,
    )


async def rebalance_refunded(
    session: AsyncSession, move: RebalanceMove, solver: str, refunded: int, *, now: datetime
) -> None:
    """A move the bridge refunded on its origin (once; after its rebalance out, which it posts
    first if not yet): `refunded` back in the solver key."""
    await rebalanced_out(session, move, solver, now=now)
    await _post_once(
        session,
        f"rebalance-refund:{move.id}",
        books.rebalance_refunded(
            (move.origin_chain_id, move.currency_in, int(move.amount)), refunded, solver
        ),
        now=now,
    )


async def app_fees_claimed(session: AsyncSession, claim: AppFeeClaim, *, now: datetime) -> None:
    await _post_once(
        session,
        f"claim:{claim.id}",
        books.app_fees_claimed(claim.chain_id, claim.currency, int(claim.amount)),
        now=now,
    )


async def sponsored(session: AsyncSession, request_id: str, *, now: datetime) -> None:
    """The request's sponsor payment pulled into the key that sent the pull."""
    payment = await session.get(SponsorPayment, request_id)
    sender = await _mined_sender(session, request_id, SPONSOR_PURPOSE)
    if payment is None or sender is None:
        return
    await _post_once(
        session,
        f"sponsor:{request_id}",
        books.sponsored(payment.chain_id, payment.currency, int(payment.amount), sender),
        now=now,
    )


async def _mined_sender(session: AsyncSession, request_id: str, purpose: str) -> str | None:
    # The status is filtered here, not in the query: with it there, SQLite's planner reads
    # the status index, every mined transaction of the journal, not the request's few.
    found = await session.execute(
        select(SentTransaction.sender, SentTransaction.status).where(
            SentTransaction.request_id == request_id, SentTransaction.purpose == purpose
        )
    )
    return next((sender for sender, status in found if status == "mined"), None)


async def gas_paid(
    session: AsyncSession,
    chain_id: int,
    *,
    sender: str,
    tx_hash: str,
    fee: int,
    now: datetime,
    native: str = NATIVE_EVM_ADDRESS,
) -> None:
    """A journalled transaction of `sender` mined (once per transaction, however often its
    receipt is read), its fee paid in `native` (the chain's gas currency)."""
    await _post_once(
        session,
        gas_event(chain_id, tx_hash),
        books.gas_paid(chain_id, native, sender, fee),
        now=now,
    )


def gas_event(chain_id: int, tx_hash: str) -> str:
    return f"gas:{chain_id}:{tx_hash}"


@dataclass(frozen=True)
class PaymentBooks:
    """What a kind's payer posts in the transaction that records its payment paid (the SVM
    vault's, the solver's exchange account's): the payment's own event (a fill's, a refund's)
    and its postings; the payer adds what the payment cost it (`gas_paid`)."""

    event: str
    postings: tuple[Posting, ...]


def fill_books(
    request_id: str, chain_id: int, currency: str, amount: int, payer: str
) -> PaymentBooks:
    """A fill paid from `payer`'s account (the solver's there): `amount` of `currency` out of
    it, the cost of the fill (the same event as an EVM fill's, `fill:<request>`)."""
    return PaymentBooks(
        f"fill:{request_id}", books.filled(None, 0, (chain_id, currency, amount), payer)
    )


def refund_books(deposit: Deposit, payer: str) -> PaymentBooks:
    """The deposit part paid back whole from `payer`'s account, which held it."""
    amount = int(deposit.amount)
    return PaymentBooks(
        refund_event(deposit),
        books.refunded(
            deposit.chain_id, deposit.currency, amount, amount, books.key_account(payer)
        ),
    )


def refund_event(deposit: Deposit) -> str:
    return f"refund:{deposit.id}"


async def payment_paid(session: AsyncSession, paid: PaymentBooks, *, now: datetime) -> None:
    """A kind's payment paid (once)."""
    await _post_once(session, paid.event, paid.postings, now=now)


async def key_transfer(
    session: AsyncSession,
    chain_id: int,
    *,
    sender: str,
    recipient: str,
    tx_hash: str,
    amount: int,
    now: datetime,
) -> None:
    """A journalled transfer between the service's keys mined (a gas top-up), once."""
    await _post_once(
        session,
        f"transfer:{chain_id}:{tx_hash}",
        books.transferred(chain_id, NATIVE_EVM_ADDRESS, sender, recipient, amount),
        now=now,
    )


def _openings_of(chain_id: int) -> str:
    return f"opening:{chain_id}:"


def opening_event(chain_id: int, currency: str, account: str) -> str:
    return f"{_openings_of(chain_id)}{currency.lower()}:{account}"


async def opened(session: AsyncSession, chain_id: int, currency: str, account: str) -> bool:
    return await _posted(session, opening_event(chain_id, currency, account))


async def opened_accounts(session: AsyncSession, chain_id: int) -> frozenset[tuple[str, str]]:
    """The (currency, account) pairs of the chain opened already (every opening posts to the
    `opening` account, at zero too)."""
    events = await session.scalars(
        select(LedgerEntry.event)
        .where(LedgerEntry.chain_id == chain_id, LedgerEntry.account == books.OPENING)
        .distinct()
    )
    found = set()
    for event in events:
        currency, _, account = event.removeprefix(_openings_of(chain_id)).partition(":")
        found.add((currency, account))
    return frozenset(found)


async def open_account(
    session: AsyncSession, chain_id: int, currency: str, account: str, amount: int, *, now: datetime
) -> bool:
    """The account's opening balance, as found on chain (once; zero is recorded too, so the
    account counts as opened). False when it was opened already."""
    event = opening_event(chain_id, currency, account)
    await _hold(session, event)
    if await _posted(session, event):
        return False
    postings = books.opened(chain_id, currency, account, amount)
    if not postings:  # recorded at zero: the account is opened with nothing in it
        postings = (
            Posting(chain_id, currency, account, 0),
            Posting(chain_id, currency, books.OPENING, 0),
        )
        for posting in postings:
            session.add(
                LedgerEntry(
                    event=event,
                    chain_id=chain_id,
                    currency=currency.lower(),
                    account=posting.account,
                    amount="0",
                    created_at=now,
                )
            )
        return True
    await post(session, event, postings, now=now)
    return True


async def balances(session: AsyncSession, chain_id: int | None = None) -> Balances:
    """Every account's balance, by (chain, currency, account)."""
    query = select(
        LedgerEntry.chain_id, LedgerEntry.currency, LedgerEntry.account, LedgerEntry.amount
    )
    if chain_id is not None:
        query = query.where(LedgerEntry.chain_id == chain_id)
    sums: Balances = defaultdict(int)
    for chain, currency, account, amount in await session.execute(query):
        sums[(chain, currency, account)] += int(amount)
    return dict(sums)


async def seen_unconfirmed(session: AsyncSession, chain_id: int) -> dict[tuple[str, str], int]:
    """Deposits seen on the chain and not yet confirmed (so not yet in the books), by currency
    and where they were paid (`depository`, or `receiver` for v1). Those from before this
    database watched the chain are left out: never posted, they are in the opening balances."""
    watch_start = await session.scalar(
        select(ChainCursor.block_number).where(
            ChainCursor.chain_id == chain_id, ChainCursor.role == _WATCH_START
        )
    )
    if watch_start is None:  # every deposit found so far is from before
        return {}
    sums: dict[tuple[str, str], int] = defaultdict(int)
    for currency, paid_to, amount in await session.execute(
        select(Deposit.currency, Deposit.paid_to, Deposit.amount).where(
            Deposit.chain_id == chain_id,
            Deposit.state == "seen",
            Deposit.part == _WHOLE,
            Deposit.block_number > watch_start,
        )
    ):
        sums[(currency.lower(), paid_to)] += int(amount)
    return dict(sums)


async def in_flight_senders(session: AsyncSession, chain_id: int) -> dict[str, int]:
    """How many journalled transactions of each sender on the chain are not yet settled."""
    rows = await session.execute(
        select(SentTransaction.sender, func.count())
        .where(
            SentTransaction.chain_id == chain_id,
            SentTransaction.status.in_(("signed", "broadcast", "replaced")),
        )
        .group_by(SentTransaction.sender)
    )
    return {sender.lower(): int(count) for sender, count in rows}


async def senders(session: AsyncSession, chain_id: int) -> list[str]:
    """The keys that sent journalled transactions on the chain."""
    rows = await session.scalars(
        select(SentTransaction.sender).where(SentTransaction.chain_id == chain_id).distinct()
    )
    return sorted({sender.lower() for sender in rows})


async def payouts_in_flight(session: AsyncSession, chain_id: int) -> int:
    """Payouts out of the chain's Depository started and not yet settled: refunds submitted,
    repayments sending, app-fee claims submitted."""
    refunds = await session.scalar(
        select(func.count())
        .select_from(Deposit)
        .where(Deposit.chain_id == chain_id, Deposit.refund_status == "submitted")
    )
    repaying = await session.scalar(
        select(func.count())
        .select_from(Repayment)
        .where(Repayment.chain_id == chain_id, Repayment.state == SENDING)
    )
    claims = await session.scalar(
        select(func.count())
        .select_from(AppFeeClaim)
        .where(AppFeeClaim.chain_id == chain_id, AppFeeClaim.state == _CLAIM_SUBMITTED)
    )
    return (refunds or 0) + (repaying or 0) + (claims or 0)


async def repayments_in_flight_to(session: AsyncSession, chain_id: int) -> dict[str, int]:
    """How many repayments out of the chain's Depository each recipient has on its way: a
    repayment mined and not yet recorded has moved the recipient's balance on chain too."""
    rows = await session.execute(
        select(Repayment.recipient, func.count())
        .where(Repayment.chain_id == chain_id, Repayment.state == SENDING)
        .group_by(Repayment.recipient)
    )
    return {recipient.lower(): int(count) for recipient, count in rows}


async def fills_in_flight(session: AsyncSession, chain_id: int) -> int:
    """Requests whose fill on the chain is sent and not yet recorded mined."""
    found = await session.scalar(
        select(func.count())
        .select_from(Request)
        .where(
            Request.destination_chain_id == chain_id,
            Request.status == RequestStatus.SUBMITTED,
        )
    )
    return found or 0


async def read_at_one_moment(session: AsyncSession) -> None:
    """Makes the session's transaction read one moment of the books (called before its first
    statement): on PostgreSQL each statement otherwise sees what committed before it, so two
    reads in one transaction could disagree. On SQLite the session holds the process's one
    connection, through which all its writes go."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})


async def last_entry(session: AsyncSession, chain_id: int) -> int:
    """The newest posting's id on the chain (0 with none): its books moved when it changed
    (postings on other chains, another chain's accounts opened say, leave it)."""
    found = await session.scalar(
        select(func.max(LedgerEntry.id)).where(LedgerEntry.chain_id == chain_id)
    )
    return found or 0
