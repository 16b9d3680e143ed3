"""The books: which accounts each money event moves, per chain and currency, in the smallest
units. Pure rules; `store.books` writes them in the transaction of the event that causes them.

Every event's postings are balanced: for each (chain, currency) they sum to zero. A positive
amount is a debit (an asset grows, or a liability shrinks), a negative one a credit. The
accounts:

- `depository`: what the chain's Depository holds (an asset);
- `key:<address>`: what a signing key of the service holds (an asset): on the SVM chain the
  solver's vault, on the perps exchange the solver's exchange account;
- `owed_to_users`: deposits held in escrow for their users until filled or refunded;
- `owed_to_solver`: deposits of filled orders, owed to the solver until repaid;
- `app_fees_owed`: app fees the Depository holds for their recipients until claimed;
- `opening`: the balances found on chain when the books were opened (equity);
- `filled`: what the solver paid out filling orders (the cost of fills);
- `repaid`: what the Depository paid the solver back (the income of fills); a deposit paid to
  an account of the solver's own is earned at its fill (`earned`);
- `refund_gas_kept`: what a refund kept of its deposit for its gas;
- `sponsorship`: what sponsors paid the solver for the fees they sponsored (income);
- `gas`: what each key paid for its transactions (an expense);
- `in_transit`: on a move's origin chain, what the solver sent through a bridge toward another
  chain and has not arrived yet (an asset);
- `rebalanced`: what moves carried between chains, + on the origin (what left it), - on the
  destination (what arrived): the clearing that keeps each chain's postings balanced; over
  every chain of a currency it sums to zero;
- `bridge_fees`: what a bridge kept of a move (an expense).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

DEPOSITORY = "depository"
OWED_TO_USERS = "owed_to_users"
OWED_TO_SOLVER = "owed_to_solver"
APP_FEES_OWED = "app_fees_owed"
OPENING = "opening"
FILLED = "filled"
REPAID = "repaid"
REFUND_GAS_KEPT = "refund_gas_kept"
SPONSORSHIP = "sponsorship"
GAS = "gas"
IN_TRANSIT = "in_transit"
REBALANCED = "rebalanced"
BRIDGE_FEES = "bridge_fees"
FADE_PENALTIES = "fade_penalties"
KEY_PREFIX = "key:"
# What the service earns, for the report: its income less the cost of its fills and moves.
EARNINGS = (FILLED, REPAID, REFUND_GAS_KEPT, SPONSORSHIP, BRIDGE_FEES, FADE_PENALTIES)


class UnbalancedEvent(ValueError):
    """An event's postings do not sum to zero in some chain and currency."""


def key_account(address: str) -> str:
    return KEY_PREFIX + address.lower()


@dataclass(frozen=True)
class Posting:
    chain_id: int
    currency: str
    account: str
    amount: int


def balanced(postings: Iterable[Posting]) -> tuple[Posting, ...]:
    """The postings without zeros, once checked to sum to zero per (chain, currency)."""
    kept = tuple(posting for posting in postings if posting.amount != 0)
    sums: dict[tuple[int, str], int] = defaultdict(int)
    for posting in kept:
        sums[(posting.chain_id, posting.currency)] += posting.amount
    unbalanced = {where: total for where, total in sums.items() if total != 0}
    if unbalanced:
        raise UnbalancedEvent(f"postings do not balance: {unbalanced}")
    return kept


def deposited(chain_id: int, currency: str, amount: int, holder: str) -> tuple[Posting, ...]:
    """A deposit confirmed: `holder` (the Depository, or the key a v1 deposit was forwarded
    to) holds it, owed to its user until filled or refunded."""
    return balanced(
        (
            Posting(chain_id, currency, holder, amount),
            Posting(chain_id, currency, OWED_TO_USERS, -amount),
        )
    )


def filled(
    origin: tuple[int, str, int] | None,
    app_fees: int,
    spent: tuple[int, str, int] | None,
    solver: str | None,
) -> tuple[Posting, ...]:
    """An order filled. On the origin (`origin`: chain, currency, the deposit that paid for it,
    held by the Depository): no longer owed to the user, but to the solver, less the app fees
    it carried, which are owed to their recipients. On the destination (`spent`: chain,
    currency, what the fill took from the solver's inventory): the solver key paid it."""
    postings: list[Posting] = []
    if origin is not None:
        chain_id, currency, amount = origin
        postings += [
            Posting(chain_id, currency, OWED_TO_USERS, amount),
            Posting(chain_id, currency, OWED_TO_SOLVER, -(amount - app_fees)),
            Posting(chain_id, currency, APP_FEES_OWED, -app_fees),
        ]
    if spent is not None and solver is not None:
        chain_id, currency, amount = spent
        postings += [
            Posting(chain_id, currency, key_account(solver), -amount),
            Posting(chain_id, currency, FILLED, amount),
        ]
    return balanced(postings)


def earned(chain_id: int, currency: str, amount: int) -> tuple[Posting, ...]:
    """A deposit paid to the solver's own account when made (a v1 deposit forwarded to the
    solver key, a deposit into the SVM vault or the solver's exchange account), its order
    filled: no longer owed to its user, the solver's there and then (no repayment follows)."""
    return balanced(
        (
            Posting(chain_id, currency, OWED_TO_USERS, amount),
            Posting(chain_id, currency, REPAID, -amount),
        )
    )


def refunded(
    chain_id: int, currency: str, deposit: int, paid: int, holder: str
) -> tuple[Posting, ...]:
    """A deposit paid back: `holder` paid `paid`, no longer owed to the user; what it kept of
    the deposit for the refund's gas stays with the holder as the service's."""
    return balanced(
        (
            Posting(chain_id, currency, holder, -paid),
            Posting(chain_id, currency, OWED_TO_USERS, deposit),
            Posting(chain_id, currency, REFUND_GAS_KEPT, -(deposit - paid)),
        )
    )


def repaid(chain_id: int, currency: str, amount: int, solver: str) -> tuple[Posting, ...]:
    """A deposit owed to the solver paid out of the Depository to the solver's key."""
    return balanced(
        (
            Posting(chain_id, currency, DEPOSITORY, -amount),
            Posting(chain_id, currency, OWED_TO_SOLVER, amount),
            Posting(chain_id, currency, key_account(solver), amount),
            Posting(chain_id, currency, REPAID, -amount),
        )
    )


def repaid_to_external_solver(chain_id: int, currency: str, amount: int) -> tuple[Posting, ...]:
    """A deposit owed for an order an external solver filled, paid out of the Depository to
    that solver: no key of the service's receives it, and the service earns nothing by it."""
    return balanced(
        (
            Posting(chain_id, currency, DEPOSITORY, -amount),
            Posting(chain_id, currency, OWED_TO_SOLVER, amount),
        )
    )


def fade_debited(chain_id: int, currency: str, amount: int, solver: str) -> tuple[Posting, ...]:
    """A faded solver's bond debited to the solver key, for what its fallback cost."""
    return balanced(
        (
            Posting(chain_id, currency, key_account(solver), amount),
            Posting(chain_id, currency, FADE_PENALTIES, -amount),
        )
    )


def app_fees_claimed(chain_id: int, currency: str, amount: int) -> tuple[Posting, ...]:
    """App fees paid out of the Depository to the recipient who claimed them."""
    return balanced(
        (
            Posting(chain_id, currency, DEPOSITORY, -amount),
            Posting(chain_id, currency, APP_FEES_OWED, amount),
        )
    )


def sponsored(chain_id: int, currency: str, amount: int, solver: str) -> tuple[Posting, ...]:
    """A sponsor's payment pulled into the solver key."""
    return balanced(
        (
            Posting(chain_id, currency, key_account(solver), amount),
            Posting(chain_id, currency, SPONSORSHIP, -amount),
        )
    )


def transferred(
    chain_id: int, currency: str, sender: str, recipient: str, amount: int
) -> tuple[Posting, ...]:
    """One key of the service paid another (a gas top-up from the solver)."""
    return balanced(
        (
            Posting(chain_id, currency, key_account(sender), -amount),
            Posting(chain_id, currency, key_account(recipient), amount),
        )
    )


def gas_paid(chain_id: int, native: str, sender: str, fee: int) -> tuple[Posting, ...]:
    """A key's mined transaction (reverted or not) cost it `fee` in the native currency."""
    return balanced(
        (
            Posting(chain_id, native, key_account(sender), -fee),
            Posting(chain_id, native, GAS, fee),
        )
    )


def rebalanced_out(chain_id: int, currency: str, amount: int, solver: str) -> tuple[Posting, ...]:
    """A move's deposit mined on its origin: the solver key paid it, in transit until it
    arrives."""
    return balanced(
        (
            Posting(chain_id, currency, key_account(solver), -amount),
            Posting(chain_id, currency, IN_TRANSIT, amount),
        )
    )


def rebalanced_in(
    origin: tuple[int, str, int], fee: int, destination: tuple[int, str, int], solver: str
) -> tuple[Posting, ...]:
    """A move arrived: on the origin (chain, currency, the amount sent) it is no longer in
    transit, the bridge's `fee` (in the origin's units) spent and the rest carried away; on the
    destination (chain, currency, what arrived) the solver key holds it."""
    origin_chain, origin_currency, amount = origin
    chain_id, currency, amount_out = destination
    return balanced(
        (
            Posting(origin_chain, origin_currency, IN_TRANSIT, -amount),
            Posting(origin_chain, origin_currency, BRIDGE_FEES, fee),
            Posting(origin_chain, origin_currency, REBALANCED, amount - fee),
            Posting(chain_id, currency, key_account(solver), amount_out),
            Posting(chain_id, currency, REBALANCED, -amount_out),
        )
    )


def rebalance_refunded(
    origin: tuple[int, str, int], refunded: int, solver: str
) -> tuple[Posting, ...]:
    """A move the bridge paid back on its origin (chain, currency, the amount sent): no longer
    in transit, `refunded` back in the solver key, what the bridge kept of it (its refund's gas)
    a bridge fee."""
    chain_id, currency, amount = origin
    return balanced(
        (
            Posting(chain_id, currency, IN_TRANSIT, -amount),
            Posting(chain_id, currency, key_account(solver), refunded),
            Posting(chain_id, currency, BRIDGE_FEES, amount - refunded),
        )
    )


def opened(chain_id: int, currency: str, account: str, amount: int) -> tuple[Posting, ...]:
    """An account's balance found on chain when the books were opened for it."""
    return balanced(
        (
            Posting(chain_id, currency, account, amount),
            Posting(chain_id, currency, OPENING, -amount),
        )
    )


def reversed_(postings: Iterable[Posting]) -> tuple[Posting, ...]:
    """The postings that undo `postings` (a confirmed deposit a reorg took out)."""
    return balanced(
        Posting(p.chain_id, p.currency, p.account, -p.amount) for p in postings if p.amount
    )


# Why an account's balance on chain differs from its books.
SEEN_UNCONFIRMED = "deposits seen, not yet confirmed"
IN_FLIGHT = "transactions in flight"
ARRIVING = (
    "rebalance moves arriving or refunded (sent toward the chain, or from it and paid back, "
    "not yet booked)"
)
UNREAD = "deposits in blocks not read yet (the indexer is behind the block the chain was read at)"
NOT_OPENED = "not opened yet (its opening waits until nothing unsettled moves the account)"
UNRECORDED_IN = "received, recorded by nothing (a donation or another outside transfer)"
UNRECORDED_OUT = "paid out, recorded by nothing (an outside transfer, or a reorg not yet settled)"


@dataclass(frozen=True)
class Difference:
    """An account's balance on chain against its books: the difference named by cause where
    the service can name it; what is left is unexplained (never absorbed)."""

    on_chain: int
    booked: int
    explained: tuple[tuple[str, int], ...]
    unexplained: int

    @property
    def difference(self) -> int:
        return self.on_chain - self.booked

    @property
    def unexplained_cause(self) -> str | None:
        if self.unexplained == 0:
            return None
        return UNRECORDED_IN if self.unexplained > 0 else UNRECORDED_OUT


def reconcile(
    on_chain: int,
    booked: int,
    *,
    seen: int,
    in_flight: bool,
    arriving: int = 0,
    unread: bool = False,
    opened: bool = True,
) -> Difference:
    """`seen`: deposits to the account on chain that the books take only once confirmed;
    `in_flight`: transactions that may move the account are sent and not yet settled, so
    what is left of the difference is theirs until they are (the next reconciliation after
    they settle says it to the wei); `arriving`: what the rebalancer's moves sent toward the
    account (the solver key) will bring, and what its moves sent from it may be paid back
    (their `in_transit`), booked once the rebalancer sees them arrived or refunded: up to that
    much more on chain is theirs; `unread`: the account takes deposits and the chain was
    read at a block the indexer has not read yet, so more on chain may be deposits it has not
    seen (the next reconciliation after it has read them says whether it was); `opened`: the
    books hold the account's opening balance (until they do, the whole difference is that
    balance, named so)."""
    explained: list[tuple[str, int]] = []
    left = on_chain - booked
    if seen:
        explained.append((SEEN_UNCONFIRMED, seen))
        left -= seen
    if left > 0 and arriving > 0:
        landed = min(left, arriving)
        explained.append((ARRIVING, landed))
        left -= landed
    if left > 0 and unread:
        explained.append((UNREAD, left))
        left = 0
    if left and in_flight:
        explained.append((IN_FLIGHT, left))
        left = 0
    if left and not opened:
        explained.append((NOT_OPENED, left))
        left = 0
    return Difference(on_chain, booked, tuple(explained), left)
