"""Table definitions. The schema changes only through migrations in `migrations/versions`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class ChainControl(Base):
    """An operator's runtime override of a chain (e.g. disabled during an incident)."""

    __tablename__ = "chain_controls"

    chain_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    disabled: Mapped[bool] = mapped_column(Boolean, nullable=False)
    reason: Mapped[str | None] = mapped_column(String(500))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class ChainGenesis(Base):
    """The first block of each chain this database's state was recorded on: a chain that
    starts over (a new devnet) has another, and its old state means nothing there."""

    __tablename__ = "chain_genesis"

    chain_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    genesis_hash: Mapped[str] = mapped_column(String(66), nullable=False)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class WriteProbe(Base):
    """The one row /readyz rewrites to learn whether the database takes writes now (on
    SQLite about a large quote's size: `store.write_probe`)."""

    __tablename__ = "write_probes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    payload: Mapped[str] = mapped_column(Text, nullable=False)
    written_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class SignerLease(Base):
    """Which process may sign with a key on a chain: one writer at a time. `token` grows with
    every change of holder; each journal write checks it (fencing), so a process that lost the
    lease (frozen, then resumed) cannot write, hence cannot broadcast."""

    __tablename__ = "signer_leases"

    chain_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    sender: Mapped[str] = mapped_column(String(42), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200), nullable=False)
    token: Mapped[int] = mapped_column(BigInteger, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


JSONColumn = JSON().with_variant(JSONB(), "postgresql")
# SQLite autoincrements only an INTEGER primary key.
SerialId = BigInteger().with_variant(Integer(), "sqlite")
Timestamp = DateTime(timezone=True)
TxHashColumn = String(66)
# A transaction id of either kind: a 0x hash, or an SVM signature (base58, up to 88 chars).
TransactionIdColumn = String(90)
AddressColumn = String(64)
# uint256 amounts are decimal strings: SQLite has no exact integer wider than 64 bits.
AmountColumn = String(78)


class Solver(Base):
    """An external solver the operator registered (docs/solvers.md): asked for a bid on the
    quotes of its routes, up to its maximum size and within its bond (read on chain)."""

    __tablename__ = "solvers"

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    # The address signing its bids and filling on EVM chains (lower case).
    evm_address: Mapped[str] = mapped_column(AddressColumn, unique=True, nullable=False)
    # Its account per chain kind (`domain.solvers.SolverAddresses`, as JSON).
    addresses: Mapped[dict[str, str]] = mapped_column(JSONColumn, nullable=False)
    bid_url: Mapped[str] = mapped_column(String(2000), nullable=False)
    # `domain.solvers.SolverRoute`s, as JSON.
    routes: Mapped[list[dict[str, Any]]] = mapped_column(JSONColumn, nullable=False)
    max_size_usd_micros: Mapped[int] = mapped_column(BigInteger, nullable=False)
    reputation: Mapped[int] = mapped_column(Integer, nullable=False)
    cooldown_until: Mapped[datetime | None] = mapped_column(Timestamp)
    # Orders it won and did not fill in a row (the fallback filled them); a fill of its own
    # sets it back to 0. Each doubles its cooldown.
    consecutive_fades: Mapped[int] = mapped_column(
        Integer, nullable=False, default=0, server_default="0"
    )
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class SolverFade(Base):
    """An order an external solver won and did not fill, filled by the operator's fallback
    (docs/solvers.md): the cooldown it set, and the debit of the solver's bond for the
    fallback's extra cost (`cost`, in the order's output currency on its destination).

    `state`: `owed` until the allocator's `SolverBond.debit` is journalled; `sending` while it
    is unmined; then `debited` (`debited` says how much: never more than the bond held), or
    `nothing` (no bond left, or no cost), or `refused` (the debit reverted)."""

    __tablename__ = "solver_fades"
    __table_args__ = (Index("ix_solver_fades_chain_state", "chain_id", "state"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    # The solver (its row may be removed since: the fade is kept, and debited).
    solver_id: Mapped[int] = mapped_column(BigInteger, index=True, nullable=False)
    solver_address: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), unique=True, nullable=False)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    cost: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    debited: Mapped[str | None] = mapped_column(AmountColumn)
    # Its place in the solver's run of fades (1: the first), and the cooldown that set.
    consecutive: Mapped[int] = mapped_column(Integer, nullable=False)
    cooldown_until: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    tx_hash: Mapped[str | None] = mapped_column(TxHashColumn)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    settled_at: Mapped[datetime | None] = mapped_column(Timestamp)


class ApiKey(Base):
    """An integrator's API key. Only its SHA-256 is kept; the key is shown once, at creation."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    # The key's first characters, to tell keys apart in listings; not enough to use it.
    prefix: Mapped[str] = mapped_column(String(16), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    revoked_at: Mapped[datetime | None] = mapped_column(Timestamp)
    # The wallet that pays this key's sponsored fees (subsidizeFees), if any.
    sponsor_address: Mapped[str | None] = mapped_column(AddressColumn)
    sponsor_chain_id: Mapped[int | None] = mapped_column(BigInteger)
    sponsor_currency: Mapped[str | None] = mapped_column(AddressColumn)


# A request that owns a deposit address (not a child made by a later transfer to it).
OPEN_DEPOSIT_ADDRESS = "deposit_address IS NOT NULL AND parent_request_id IS NULL"
# Request columns a quote leaves empty, looked up by value only (`col = ?`, `IN`, ranges):
# indexed only where set, so the insert every quote makes skips their index.
INDEXED_WHEN_SET = (
    "api_key_id",
    "deposit_address",
    "parent_request_id",
    "origin_block_number",
    "exclusive_solver",
)


def _indexed_when_set(column: str) -> Index:
    """An index of the rows where `column` is set; a lookup by value implies that, so both
    SQLite and PostgreSQL use it for one."""
    where = text(f"{column} IS NOT NULL")
    return Index(f"ix_requests_{column}", column, postgresql_where=where, sqlite_where=where)


class Request(Base):
    """One intent: created by a quote, moved along the status machine by the workers.

    Besides the quote itself, it keeps as columns everything `/requests` filters and sorts on;
    the listing indexes are keyset-shaped: (sort column, id).
    """

    __tablename__ = "requests"
    __table_args__ = (
        Index("ix_requests_created_at_id", "created_at", "id"),
        Index("ix_requests_updated_at_id", "updated_at", "id"),
        Index("ix_requests_amount_usd_id", "amount_in_usd_micros", "id"),
        Index("ix_requests_user_created_at", "user_address", "created_at"),
        Index("ix_requests_recipient_created_at", "recipient", "created_at"),
        Index("ix_requests_status_created_at", "status", "created_at"),
        Index("ix_requests_origin_created_at", "origin_chain_id", "created_at"),
        Index("ix_requests_destination_created_at", "destination_chain_id", "created_at"),
        # The deposit-address sweeper's watch list, read at every new head
        # (`address_transfers.watched`): only the few rows that own a deposit address. Without
        # it a planner short of statistics (a table that grew since its last ANALYZE) combined
        # the origin and parent indexes and read every request of the chain, each head.
        Index(
            "ix_requests_open_deposit_addresses",
            "origin_chain_id",
            "created_at",
            postgresql_where=text(OPEN_DEPOSIT_ADDRESS),
            sqlite_where=text(OPEN_DEPOSIT_ADDRESS),
        ),
        *map(_indexed_when_set, INDEXED_WHEN_SET),
    )

    id: Mapped[str] = mapped_column(String(66), primary_key=True)
    order_id: Mapped[str] = mapped_column(String(66), unique=True, nullable=False)
    # Looked up through ix_requests_status_created_at (status first).
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    origin_chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    destination_chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    user_address: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    recipient: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    refund_to: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    origin_currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    destination_currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    trade_type: Mapped[str] = mapped_column(String(16), nullable=False)
    amount_in: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    amount_out: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    minimum_amount_out: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    amount_in_usd_micros: Mapped[int] = mapped_column(BigInteger, nullable=False)
    explicit_deposit: Mapped[bool] = mapped_column(Boolean, nullable=False)
    quote: Mapped[dict[str, Any]] = mapped_column(JSONColumn, nullable=False)
    referrer: Mapped[str | None] = mapped_column(String(200))
    api_key_id: Mapped[int | None] = mapped_column(BigInteger)
    fail_reason: Mapped[str | None] = mapped_column(String(64))
    refund_fail_reason: Mapped[str | None] = mapped_column(String(64))
    lease_owner: Mapped[str | None] = mapped_column(String(100))
    lease_expires_at: Mapped[datetime | None] = mapped_column(Timestamp)
    expires_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    request_type: Mapped[str] = mapped_column(String(32), nullable=False, default="Bridge")
    currency_in_symbol: Mapped[str] = mapped_column(String(32), nullable=False, default="")
    currency_out_symbol: Mapped[str] = mapped_column(String(32), nullable=False, default="")
    # `features` as bits, in the order of `domain.request_record.FEATURES`.
    features_mask: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    app_fees_usd_micros: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    deposit_address: Mapped[str | None] = mapped_column(AddressColumn)
    # A deposit-address request (`useDepositAddress`): strict | open, the address's recovery
    # address and CREATE2 key (the owning request's order id), who paid it and with what
    # transaction; a later transfer to the same address makes a child request (its parent's id).
    deposit_address_type: Mapped[str | None] = mapped_column(String(8))
    recovery_address: Mapped[str | None] = mapped_column(AddressColumn)
    deposit_address_key: Mapped[str | None] = mapped_column(String(66))
    depositor: Mapped[str | None] = mapped_column(AddressColumn)
    deposit_tx_hash: Mapped[str | None] = mapped_column(TxHashColumn)
    parent_request_id: Mapped[str | None] = mapped_column(String(66))
    # Set as the request moves: the accepted deposit's block, and deposit-to-fill seconds.
    origin_block_number: Mapped[int | None] = mapped_column(BigInteger)
    fill_time_seconds: Mapped[int | None] = mapped_column(BigInteger)
    # How the solver executes the destination leg (the swap, if any); see quoting.execution.
    plan: Mapped[dict[str, Any] | None] = mapped_column(JSONColumn)
    # The typed, versioned fill plan (`domain.fill_plan`), made when quoted.
    fill_plan: Mapped[dict[str, Any] | None] = mapped_column(JSONColumn)
    # What its failure was, beyond `fail_reason` (`domain.gasless.FailureDetails`, as JSON).
    fail_details: Mapped[dict[str, Any] | None] = mapped_column(JSONColumn)
    # An external solver's winning bid (docs/solvers.md): its EVM address, the one solver that
    # may fill the order until `exclusivity_deadline`.
    exclusive_solver: Mapped[str | None] = mapped_column(AddressColumn)
    exclusivity_deadline: Mapped[datetime | None] = mapped_column(Timestamp)
    # The operator's own output for the order's input, when a solver's bid beat it: what a
    # fade costs the operator is the bid's output above it.
    operator_amount_out: Mapped[str | None] = mapped_column(AmountColumn)
    app_fees: Mapped[list[AppFee]] = relationship(lazy="raise")
    sponsor_payment: Mapped[SponsorPayment | None] = relationship(lazy="raise")


class SponsorPayment(Base):
    """What a sponsor wallet owes the solver for a request's sponsored fees.

    `quoted` with the quote; `due` when the request succeeds (the solver then pulls it with
    `transferFrom`), `paid` once that transfer is mined, `void` when the request is refunded.
    """

    __tablename__ = "sponsor_payments"

    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), primary_key=True)
    chain_id: Mapped[int] = mapped_column(BigInteger, index=True, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    sponsor: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    amount_usd_micros: Mapped[int] = mapped_column(BigInteger, nullable=False)
    state: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    tx_hash: Mapped[str | None] = mapped_column(TxHashColumn)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class PermitDeposit(Base):
    """A signed deposit authorization (`usePermit`) the solver submits on the origin chain.

    `signed` when the user posts it; `sent` once the deposit is mined (the indexer then sees
    the Depository's deposit as for any other), `failed` when it reverted or expired unsent.
    """

    __tablename__ = "permit_deposits"

    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), primary_key=True)
    chain_id: Mapped[int] = mapped_column(BigInteger, index=True, nullable=False)
    order_id: Mapped[str] = mapped_column(String(66), nullable=False)
    depositor: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    valid_before: Mapped[int] = mapped_column(BigInteger, nullable=False)
    signature: Mapped[str] = mapped_column(String(132), nullable=False)
    state: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    tx_hash: Mapped[str | None] = mapped_column(TxHashColumn)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class AppFee(Base):
    """One app-fee recipient's share of a request, in the input currency.

    `quoted` when the quote is made; `owed` once the request succeeds cross-chain (the share
    stays in the origin chain's Depository until claimed), `claiming` while a claim pays it
    out, `paid` when that payout is mined or the user's own same-chain transaction paid it,
    `void` when the request was refunded.
    """

    __tablename__ = "app_fees"

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), index=True, nullable=False)
    recipient: Mapped[str] = mapped_column(AddressColumn, index=True, nullable=False)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    bps: Mapped[int] = mapped_column(Integer, nullable=False)
    quoted_amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    actual_amount: Mapped[str | None] = mapped_column(AmountColumn)
    amount_usd_micros: Mapped[int] = mapped_column(BigInteger, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    # The claim paying this share out, once its recipient filed one.
    claim_id: Mapped[int | None] = mapped_column(
        BigInteger, ForeignKey("app_fee_claims.id"), index=True
    )


class AppFeeClaim(Base):
    """A recipient's signed claim of its owed app fees on one chain and currency.

    Filed with its shares (`owed` → `claiming`) in one transaction; the payer sends the payout
    through the journal (`submitted`) and, once it is mined, the claim and its shares are
    `paid`. `claim_id` is the EIP-712 hash the wallet signed: a claim is filed once.
    """

    __tablename__ = "app_fee_claims"

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    claim_id: Mapped[str] = mapped_column(TxHashColumn, unique=True, nullable=False)
    wallet: Mapped[str] = mapped_column(AddressColumn, index=True, nullable=False)
    recipient: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    state: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    tx_hash: Mapped[str | None] = mapped_column(TxHashColumn)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class NonceMapping(Base):
    """A wallet's signed word (POST /authorize) that its transfer with `nonce` pays a request:
    one request per (wallet, nonce), never remapped."""

    __tablename__ = "nonce_mappings"
    __table_args__ = (UniqueConstraint("wallet", "nonce"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    wallet: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    # uint256, as a decimal string (see AmountColumn).
    nonce: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), index=True, nullable=False)
    wallet_chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    depositor: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    signature_chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    signature: Mapped[str] = mapped_column(String(132), nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class GaslessExecution(Base):
    """A call a key's gas sponsor sends for a request (POST /execute).

    `queued` when accepted; `submitted` once its transaction is journalled and sent; `mined`
    or `reverted` with what it cost (`spent_wei`). `reserved_wei` (its gas limit at the fee
    offered) counts against the key's spend cap until then. `standalone`: a raw call made its
    own request (no quoted request to deposit for); it ends when mined.
    """

    __tablename__ = "gasless_executions"
    __table_args__ = (Index("ix_gasless_executions_chain_state", "chain_id", "state"),)

    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), primary_key=True)
    api_key_id: Mapped[int] = mapped_column(BigInteger, index=True, nullable=False)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sponsor: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    to_address: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    call_data: Mapped[str] = mapped_column(Text, nullable=False)
    value: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    authorization_list: Mapped[list[Any]] = mapped_column(JSONColumn, nullable=False)
    gas_limit: Mapped[int] = mapped_column(BigInteger, nullable=False)
    reserved_wei: Mapped[int] = mapped_column(BigInteger, nullable=False)
    spent_wei: Mapped[int | None] = mapped_column(BigInteger)
    subsidized: Mapped[bool] = mapped_column(Boolean, nullable=False)
    standalone: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False, server_default=false()
    )
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    tx_hash: Mapped[str | None] = mapped_column(TxHashColumn)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class Deposit(Base):
    """A deposit seen on an origin chain's Depository, matched to a request or not."""

    __tablename__ = "deposits"
    __table_args__ = (UniqueConstraint("chain_id", "tx_hash", "log_index", "part"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    tx_hash: Mapped[str] = mapped_column(TransactionIdColumn, nullable=False)
    log_index: Mapped[int] = mapped_column(Integer, nullable=False)
    # 0: the deposit as logged; 1: what an accepted deposit paid above its quote, split off it
    # and returned (`store.deposits.EXCESS`).
    part: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    block_number: Mapped[int] = mapped_column(BigInteger, nullable=False)
    block_hash: Mapped[str] = mapped_column(TxHashColumn, nullable=False)
    order_id: Mapped[str] = mapped_column(String(66), index=True, nullable=False)
    depositor: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    # Where the funds went: "depository" (escrow) or "receiver" (forwarded to the solver, v1).
    paid_to: Mapped[str] = mapped_column(String(16), nullable=False, server_default="depository")
    state: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    request_id: Mapped[str | None] = mapped_column(ForeignKey("requests.id"), index=True)
    outcome: Mapped[str | None] = mapped_column(String(64))
    # Refund of this deposit: None (not due or not yet sent), submitted, done, skipped.
    refund_status: Mapped[str | None] = mapped_column(String(16), index=True)
    refund_tx_hash: Mapped[str | None] = mapped_column(TransactionIdColumn)
    refund_amount: Mapped[str | None] = mapped_column(AmountColumn)
    # Why a refund was skipped (the deposit kept): AMOUNT_TOO_LOW_TO_REFUND, ...
    refund_fail_reason: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class Repayment(Base):
    """A deposit paid to the solver out of the Depository once the order it paid for was
    filled and the fill was final (`kinds.evm.repayer`): one row per deposit part, ever.

    `state` (`domain.repayments`): `sending` while the transaction paying it (named by `batch`,
    its journal purpose, shared by the deposits paid together) is signed, sent or unmined;
    then `repaid`, with the transaction, its block and this deposit's share of its gas and
    fee, or `refunded` / `paid_elsewhere` when another payout under the deposit's nonce came
    first, or `refused` (the Depository refused it; `reason` says why)."""

    __tablename__ = "repayments"
    __table_args__ = (Index("ix_repayments_chain_state", "chain_id", "state"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    deposit_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("deposits.id"), unique=True, nullable=False
    )
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), index=True, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    # What the solver is paid: the deposit less the app fees it carried.
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    recipient: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    batch: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    # The EIP-712 hash of the payout last signed for it (`CallExecuted`'s id), and its
    # expiration (unix seconds).
    payout_id: Mapped[str | None] = mapped_column(TxHashColumn)
    expiration: Mapped[int | None] = mapped_column(BigInteger)
    tx_hash: Mapped[str | None] = mapped_column(TxHashColumn, index=True)
    block_number: Mapped[int | None] = mapped_column(BigInteger)
    # This deposit's share of the transaction's gas and fee (wei), and how many it repaid.
    gas_used: Mapped[int | None] = mapped_column(BigInteger)
    fee: Mapped[str | None] = mapped_column(AmountColumn)
    batch_size: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    settled_at: Mapped[datetime | None] = mapped_column(Timestamp)


class LedgerEntry(Base):
    """One posting of the books (`domain.books`): an event's amount on one account of one
    chain and currency, in the smallest unit, signed (a debit positive). The postings of one
    event (`event`, its key: `deposit:<chain>:<tx>:<log>`, `fill:<request>`, ...) sum to zero
    per chain and currency, and are written in the transaction of what caused them."""

    __tablename__ = "ledger_entries"
    __table_args__ = (Index("ix_ledger_entries_chain_account", "chain_id", "currency", "account"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    event: Mapped[str] = mapped_column(String(200), index=True, nullable=False)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    account: Mapped[str] = mapped_column(String(80), nullable=False)
    # A signed integer as a decimal string (see AmountColumn).
    amount: Mapped[str] = mapped_column(String(80), nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class RebalanceMove(Base):
    """A move of the solver's inventory from one chain to another through the bridge
    (`kinds.evm.rebalancer`, `domain.rebalancing`): `amount` of `currency_in` on the origin,
    to arrive as `currency_out` (the same `symbol`) on the destination.

    `status`: `failed` at once when the bridge refuses to quote it; `quoted` once the bridge's
    quote is stored (`quote`: `BridgeQuote.document()`,
    kept before anything is sent, so a crash resumes it by sending the same quote); `sent`
    once its transactions are journalled and broadcast (`tx_hashes`); then `arrived`
    (`amount_out` paid to the solver on the destination), `refunded` (the bridge paid the
    deposit back on the origin) or `failed` (the bridge refused it, or our transaction
    reverted: `reason`). `last_error`: why the bridge or a chain did not answer at the last
    try (the move is tried again), cleared once they do."""

    __tablename__ = "rebalance_moves"
    __table_args__ = (Index("ix_rebalance_moves_status", "status"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    origin_chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    destination_chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    currency_in: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    currency_out: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    symbol: Mapped[str] = mapped_column(String(32), nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    # What the quote said would arrive, then what arrived.
    amount_out: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    # The bridge's name for the move (its request id) and its quote; none for a move the
    # bridge refused to quote.
    request_id: Mapped[str | None] = mapped_column(String(80), unique=True)
    quote: Mapped[dict[str, Any] | None] = mapped_column(JSONColumn)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    tx_hashes: Mapped[list[str] | None] = mapped_column(JSONColumn)
    reason: Mapped[str | None] = mapped_column(String(300))
    last_error: Mapped[str | None] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    sent_at: Mapped[datetime | None] = mapped_column(Timestamp)
    ended_at: Mapped[datetime | None] = mapped_column(Timestamp)


class AddressTransfer(Base):
    """A transfer into a deposit address (`log_index` -1 for ether), and its sweep into the
    Depository for the request it pays: `seen`, then `swept` (or `failed`) once the sweep is
    mined; `too_small` when it is worth no more than its sweep's gas (never swept), `reorged`
    when its block was. `leg` is `paid`, or `excess` for what an overpaid strict transfer is
    refunded (split off its `paid` leg, whose `amount` is then the quoted amount)."""

    __tablename__ = "address_transfers"
    __table_args__ = (UniqueConstraint("chain_id", "tx_hash", "log_index", "leg"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    address: Mapped[str] = mapped_column(AddressColumn, index=True, nullable=False)
    tx_hash: Mapped[str] = mapped_column(TxHashColumn, nullable=False)
    log_index: Mapped[int] = mapped_column(Integer, nullable=False)
    block_number: Mapped[int] = mapped_column(BigInteger, nullable=False)
    block_hash: Mapped[str] = mapped_column(TxHashColumn, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    depositor: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    leg: Mapped[str] = mapped_column(String(8), nullable=False, default="paid")
    request_id: Mapped[str | None] = mapped_column(ForeignKey("requests.id"), index=True)
    state: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class RequestTransaction(Base):
    """A transaction of a request: its deposit (in), fill or refund (out)."""

    __tablename__ = "request_transactions"
    __table_args__ = (UniqueConstraint("request_id", "kind", "tx_hash"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), index=True, nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    tx_hash: Mapped[str] = mapped_column(TransactionIdColumn, index=True, nullable=False)
    block_number: Mapped[int | None] = mapped_column(BigInteger)
    fee: Mapped[str | None] = mapped_column(AmountColumn)
    timestamp: Mapped[int | None] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    # What the transaction moved, as its logs tell: the deposit paid in, what the fill's
    # recipient got, what the refund paid back; with its USD value when it happened.
    amount: Mapped[str | None] = mapped_column(AmountColumn)
    currency: Mapped[str | None] = mapped_column(AddressColumn)
    amount_usd_micros: Mapped[int | None] = mapped_column(BigInteger)
    # Who sent the funds in (a deposit's depositor, as its log says).
    sender: Mapped[str | None] = mapped_column(AddressColumn)
    # The fee's value in micro-USD when it was paid (None: no price then).
    fee_usd_micros: Mapped[int | None] = mapped_column(BigInteger)


class ChainCursor(Base):
    """How far a worker role has processed a chain (e.g. the indexer's last scanned block)."""

    __tablename__ = "chain_cursors"

    chain_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    role: Mapped[str] = mapped_column(String(32), primary_key=True)
    block_number: Mapped[int] = mapped_column(BigInteger, nullable=False)
    block_hash: Mapped[str] = mapped_column(TxHashColumn, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class OutboxEvent(Base):
    """A status event, written in the same transaction as the status change it reports.

    For a request quoted with an API key it is also that key's webhook delivery: `delivery`
    is pending → delivered | failed | skipped (no endpoint configured when it came due).
    """

    __tablename__ = "outbox_events"
    __table_args__ = (Index("ix_outbox_events_due", "delivery", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), index=True, nullable=False)
    event: Mapped[str] = mapped_column(String(64), nullable=False)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONColumn, nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    api_key_id: Mapped[int | None] = mapped_column(BigInteger)
    delivery: Mapped[str | None] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(Timestamp)
    lease_expires_at: Mapped[datetime | None] = mapped_column(Timestamp)
    delivered_at: Mapped[datetime | None] = mapped_column(Timestamp)
    last_error: Mapped[str | None] = mapped_column(String(500))


class WebhookEndpoint(Base):
    """An API key's one webhook: where to POST, extra headers, and the key to sign with.

    The signature is an HMAC keyed with the API key itself (spec), so the key is kept here,
    encrypted with the service's webhook secret (`crossfill.webhook_secret`), never in clear.
    """

    __tablename__ = "webhook_endpoints"

    api_key_id: Mapped[int] = mapped_column(
        ForeignKey("api_keys.id"), primary_key=True, autoincrement=False
    )
    url: Mapped[str] = mapped_column(String(2000), nullable=False)
    headers: Mapped[dict[str, Any]] = mapped_column(JSONColumn, nullable=False)
    encrypted_key: Mapped[str] = mapped_column(Text, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class SentTransaction(Base):
    """The transaction manager's journal: every signed transaction, recorded before broadcast."""

    __tablename__ = "sent_transactions"
    __table_args__ = (
        UniqueConstraint("chain_id", "tx_hash"),
        # A signer's transactions mined since a block: watched until final (`mined_watch`).
        Index("ix_sent_transactions_mined", "chain_id", "sender", "status", "block_number"),
    )

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sender: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    nonce: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # `fill`, `refund`, `repay:<deposit>`, `gas-top-up:<chain>:<key>`,
    # `bridge:<request id>:<step>`, ...
    purpose: Mapped[str] = mapped_column(String(120), nullable=False)
    request_id: Mapped[str | None] = mapped_column(ForeignKey("requests.id"), index=True)
    tx_hash: Mapped[str] = mapped_column(TxHashColumn, nullable=False)
    raw_transaction: Mapped[str] = mapped_column(Text, nullable=False)
    max_fee_per_gas: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    max_priority_fee_per_gas: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    status: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    block_number: Mapped[int | None] = mapped_column(BigInteger)
    # The block it was mined in (None before it was, or when mined before this was recorded).
    block_hash: Mapped[str | None] = mapped_column(TxHashColumn)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class PaymentAttemptColumns:
    """What every payer's journal (`store.payment_journal`) keeps of an attempt: the payment it
    belongs to (`purpose`, `payment_key` on `chain_id`), its number, and its stage (`signed`
    while in flight, then the journal's word for paid, refused or dead)."""

    id: Mapped[int] = mapped_column(SerialId, primary_key=True)
    chain_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    purpose: Mapped[str] = mapped_column(String(16), nullable=False)
    payment_key: Mapped[str] = mapped_column(String(100), nullable=False)
    attempt: Mapped[int] = mapped_column(Integer, nullable=False)
    status: Mapped[str] = mapped_column(String(16), index=True, nullable=False)
    created_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, nullable=False)


class SvmPayment(PaymentAttemptColumns, Base):
    """The SVM payer's journal: every signed SVM transaction, recorded before it is sent.

    One payment (`purpose`, `key`: a fill or refund of one request) has attempts 1, 2, ...;
    a new attempt is signed only once the previous one is `expired` (its blockhash past its
    last valid block height with no status for its signature), so at most one can land.
    Its stages: signed -> landed | failed | expired.
    """

    __tablename__ = "svm_payments"
    __table_args__ = (UniqueConstraint("chain_id", "purpose", "payment_key", "attempt"),)

    recipient: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    signature: Mapped[str] = mapped_column(String(90), unique=True, nullable=False)
    raw_transaction: Mapped[str] = mapped_column(Text, nullable=False)
    blockhash: Mapped[str] = mapped_column(String(64), nullable=False)
    last_valid_block_height: Mapped[int] = mapped_column(BigInteger, nullable=False)
    slot: Mapped[int | None] = mapped_column(BigInteger)
    error: Mapped[Any | None] = mapped_column(JSONColumn)


class PerpsPayment(PaymentAttemptColumns, Base):
    """The perps payer's journal: every signed exchange action, recorded before it is posted.

    One payment (`purpose`, `key`: a fill of one request) has attempts 1, 2, ...; a new
    attempt is signed only once the previous one is `dead` (refused for its nonce, which the
    exchange will never take again, and not in the ledger), so at most one can be credited:
    the exchange takes each signer's nonce once, and every retry re-posts the same action.
    Its stages: signed -> credited | refused | dead.
    """

    __tablename__ = "perps_payments"
    __table_args__ = (
        UniqueConstraint("chain_id", "purpose", "payment_key", "attempt"),
        UniqueConstraint("signer", "nonce"),
    )

    signer: Mapped[str] = mapped_column(String(42), nullable=False)
    destination: Mapped[str] = mapped_column(String(42), nullable=False)
    currency: Mapped[str] = mapped_column(AddressColumn, nullable=False)
    amount: Mapped[str] = mapped_column(AmountColumn, nullable=False)
    action_type: Mapped[str] = mapped_column(String(16), nullable=False)
    nonce: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # The `POST /exchange` body exactly as signed: every retry posts these bytes' content.
    signed_action: Mapped[Any] = mapped_column(JSONColumn, nullable=False)
    # The exchange's hash of the transfer and its ledger time (ms), once its ledger shows it.
    tx_hash: Mapped[str | None] = mapped_column(String(90))
    ledger_time_ms: Mapped[int | None] = mapped_column(BigInteger)
    error: Mapped[str | None] = mapped_column(Text)


# Every table whose rows refer to a request (`request_id`), children before parents: what
# must go before a request can (`store.chain_genesis`), and what keeps a quote from being
# pruned unless it is only its quoted fee shares and sponsor payment (`store.retention`).
REQUEST_CHILDREN = (
    OutboxEvent,
    RequestTransaction,
    SponsorPayment,
    PermitDeposit,
    GaslessExecution,
    NonceMapping,
    AppFee,
    Deposit,
    AddressTransfer,
    SentTransaction,
)
