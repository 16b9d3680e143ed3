"""Quotes that bridge to or from the SVM chain, planned over configuration and prices (pure).

To the SVM chain: the user deposits on an EVM chain's Depository; the solver pays the SVM
recipient from its vault. From it: the user signs an SVM transaction (a transfer to the vault
plus a Memo of the order id, at most 1232 bytes); the solver fills on the EVM destination.
The same asset or not, the output is the input's USD value at the quoted prices, less the
service fee of the EVM side's fee table (or `fixedRate`, never below it). The protocol order
states the route as an EVM one does (chain names, VM address bytes); its hash is the orderId.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal

from solders.instruction import Instruction
from solders.pubkey import Pubkey

from crossfill.domain.identifiers import InvalidIdentifier, parse_svm_address
from crossfill.domain.order import Order
from crossfill.kinds.svm.config import SvmChainConfig, SvmCurrencyConfig
from crossfill.kinds.svm.options import check_svm_options
from crossfill.kinds.svm.transactions import (
    LAMPORTS_PER_SIGNATURE,
    SvmDeposit,
    TransactionTooLarge,
    check_size,
    deposit_instructions,
)
from crossfill.quoting import inputs
from crossfill.quoting.cross_vm import (
    EvmSide,
    QuotedCurrency,
    QuoteStamp,
    TransferTerms,
    bridged,
    evm_currency,
    priced_transfer,
    quoted_evm_currency,
    transfer_order,
)
from crossfill.quoting.engine import fill_deadline
from crossfill.quoting.errors import QuoteError, QuoteUnavailable
from crossfill.quoting.fees import TradeType
from crossfill.quoting.request import QuoteRequest

Direction = Literal["to_svm", "from_svm"]
BPS = 10_000
# An SVM transfer (of lamports or of a token) carries a u64 amount.
SVM_AMOUNT_LIMIT = 2**64
# maxRouteLength bounds the hops of SVM swap routing; direct transfers take one.
MAX_ROUTE_LENGTH = 16


@dataclass(frozen=True)
class SvmQuote:
    direction: Direction
    request_id: str
    order_id: str
    terms: TransferTerms
    # `fees.gas`: the user's own fee for the deposit, in the origin's gas currency.
    gas_currency: QuotedCurrency
    deposit_gas: int
    # `fixedRate`: the bps charged as the whole service fee; None when floating.
    fixed_rate_bps: int | None
    order: Order
    created_at: datetime
    expires_at: datetime
    # From the SVM chain: what the user signs (None to it).
    deposit_instructions: tuple[Instruction, ...] | None
    vault: str
    # From the SVM chain: who pays the deposit transaction's fee (`depositFeePayer`, else the
    # user); None to it.
    fee_payer: str | None = None


def svm_address(value: str | None, error_code: str, field: str) -> str:
    try:
        return parse_svm_address(value, field)
    except InvalidIdentifier as exc:
        raise QuoteError(error_code, str(exc)) from None


def _svm_currency(chain: SvmChainConfig, value: str, field: str) -> SvmCurrencyConfig:
    svm_address(value, "UNSUPPORTED_CURRENCY", field)
    found, _usd = bridged(chain.currency(value), (field, value), chain.id)
    return found


def _quoted_svm(chain: SvmChainConfig, currency: SvmCurrencyConfig) -> QuotedCurrency:
    assert currency.usd_price is not None
    return QuotedCurrency(
        chain.id, chain.name, currency.address, currency.symbol, currency.name, currency.decimals,
        currency.is_native, currency.logo_uri, currency.usd_price,
    )  # fmt: skip


def _deposit_gas(
    direction: Direction, context: SvmQuoteContext, currency_in: QuotedCurrency, user_pays: bool
) -> tuple[QuotedCurrency, int]:
    """`fees.gas`, as on EVM routes the user's own fee for its deposit in the origin's gas
    currency: the EVM deposit's gas at the chain's fee per gas, or the SVM transaction's
    signature fee (none when another account, `depositFeePayer`, pays it)."""
    if direction == "to_svm":
        evm = context.evm
        native = evm.native_currency
        usd = context.evm_native_price or native.usd_price
        if usd is None:
            raise QuoteUnavailable("PRICE_FETCH_FAILED", f"no price for {native.symbol}")
        if context.evm_fee_per_gas is None:
            raise QuoteUnavailable(
                "SERVICE_UNAVAILABLE", f"no fresh gas price for chain {evm.id} yet"
            )
        fees = evm.fees
        units = fees.deposit_gas_native if currency_in.is_native else fees.deposit_gas_erc20
        return evm_currency(evm, native, usd), units * context.evm_fee_per_gas
    sol = context.svm.native_currency
    if sol.usd_price is None:
        raise QuoteUnavailable("PRICE_FETCH_FAILED", f"no price for {sol.symbol}")
    return _quoted_svm(context.svm, sol), LAMPORTS_PER_SIGNATURE if user_pays else 0


def _fee_payer(body: QuoteRequest, direction: Direction, user: str) -> str | None:
    """`depositFeePayer`: an SVM account that pays the SVM deposit's fee and signs it too; it
    means nothing for a deposit made on an EVM chain."""
    if direction == "to_svm":
        if body.deposit_fee_payer is not None:
            raise QuoteError(
                "UNSUPPORTED_EXECUTION_TYPE",
                f"depositFeePayer applies to deposits from an SVM chain; the deposit here is "
                f"made on EVM chain {body.origin_chain_id}",
            )
        return None
    if body.deposit_fee_payer is None:
        return user
    return svm_address(body.deposit_fee_payer, "INVALID_ADDRESS", "depositFeePayer")


def _protocol_version(body: QuoteRequest, direction: Direction) -> None:
    """From the SVM chain the deposit is already paid to the solver's vault (what v1 means);
    to it, the deposit goes into the EVM Depository (v2), so v1 cannot hold."""
    if body.protocol_version == "v1" and direction == "to_svm":
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "protocolVersion v1 is served to an SVM chain only for deposits from one; "
            "a deposit on an EVM chain for the SVM chain goes to the Depository (v2)",
        )


def _svm_amount(amount: int, direction: Direction) -> None:
    """From the SVM chain the user's deposit is one SVM transfer of the amount: above its u64
    the deposit cannot be made. (To it, the output is bounded by the vault's balance.)"""
    if direction == "from_svm" and amount >= SVM_AMOUNT_LIMIT:
        raise QuoteError(
            "INVALID_INPUT",
            "amount must be below 2**64 from the SVM chain: what one SVM transfer carries",
        )


def _route_length(body: QuoteRequest) -> None:
    if body.max_route_length is not None and not 1 <= body.max_route_length <= MAX_ROUTE_LENGTH:
        raise QuoteError("INVALID_INPUT", f"maxRouteLength must be 1 to {MAX_ROUTE_LENGTH}")


@dataclass(frozen=True)
class SvmQuoteContext:
    evm: EvmSide
    svm: SvmChainConfig
    # The EVM currency's live USD price, when the service has one (else its configured one);
    # the same for the EVM chain's gas currency.
    evm_price: Decimal | None
    evm_native_price: Decimal | None
    # The EVM chain's fee per gas (wei) for a deposit on it; None when not known yet (a 503 to
    # the SVM chain), unused from it.
    evm_fee_per_gas: int | None
    stamp: QuoteStamp


def _fee_bps(fixed_rate_bps: int | None, service_fee_bps: int) -> int:
    """`fixedRate` replaces the service fee (these quotes charge no gas), never undercutting it."""
    if fixed_rate_bps is None:
        return service_fee_bps
    if fixed_rate_bps < service_fee_bps:
        raise QuoteError(
            "AMOUNT_TOO_LOW",
            f"fixedRate {fixed_rate_bps} bps does not cover this route's service fee: ask for "
            f"at least {service_fee_bps} bps",
        )
    return fixed_rate_bps


def _raw(address: str) -> bytes:
    """An address as bytes of its VM: 0x-hex is EVM (base58 has no `0`), else base58."""
    if address.startswith("0x"):
        return bytes.fromhex(address[2:])
    return bytes(Pubkey.from_string(address))


def plan_svm_quote(body: QuoteRequest, direction: Direction, context: SvmQuoteContext) -> SvmQuote:
    options = check_svm_options(body)
    if inputs.trade_type(body.trade_type) is not TradeType.EXACT_INPUT:
        raise QuoteError("UNSUPPORTED_EXECUTION_TYPE", "SVM routes are quoted EXACT_INPUT only")
    _route_length(body)
    _protocol_version(body, direction)
    amount_in = inputs.amount(body.amount)
    _svm_amount(amount_in, direction)
    evm, svm = context.evm, context.svm
    vault = svm.solver.address
    if direction == "to_svm":
        user = inputs.address(body.user, "INVALID_ADDRESS", "user")
        recipient = svm_address(body.recipient, "INVALID_RECIPIENT", "recipient")
        refund_to = inputs.address(body.refund_to or user, "INVALID_ADDRESS", "refundTo")
        currency_in = quoted_evm_currency(
            evm, body.origin_currency, "originCurrency", context.evm_price
        )
        currency_out = _quoted_svm(
            svm, _svm_currency(svm, body.destination_currency, "destinationCurrency")
        )
    else:
        user = svm_address(body.user, "INVALID_ADDRESS", "user")
        recipient = inputs.address(body.recipient, "INVALID_RECIPIENT", "recipient")
        refund_to = svm_address(body.refund_to or user, "INVALID_ADDRESS", "refundTo")
        currency_in = _quoted_svm(svm, _svm_currency(svm, body.origin_currency, "originCurrency"))
        currency_out = quoted_evm_currency(
            evm, body.destination_currency, "destinationCurrency", context.evm_price
        )
    fee_bps = _fee_bps(options.fixed_rate_bps, evm.fees.service_fee_bps)
    terms = priced_transfer(
        (user, recipient, refund_to), (currency_in, currency_out), amount_in, fee_bps
    )
    stamp = context.stamp
    expires_at = stamp.expires_at
    order = transfer_order(terms, stamp, deadline=fill_deadline(expires_at), raw=_raw)
    order_id = "0x" + order.order_id().hex()
    fee_payer = _fee_payer(body, direction, user)
    instructions = None
    if fee_payer is not None:
        mint = None if currency_in.is_native else Pubkey.from_string(currency_in.address)
        deposit = SvmDeposit(
            user=Pubkey.from_string(user), vault=Pubkey.from_string(vault), mint=mint,
            amount=amount_in, decimals=currency_in.decimals, order_id=order_id,
            fee_payer=Pubkey.from_string(fee_payer),
        )  # fmt: skip
        instructions = tuple(deposit_instructions(deposit))
        try:
            check_size(list(instructions), deposit.payer)
        except TransactionTooLarge as exc:
            raise QuoteError("SOLANA_TX_TOO_LARGE", str(exc)) from None
    gas_currency, deposit_gas = _deposit_gas(direction, context, currency_in, fee_payer == user)
    return SvmQuote(
        direction=direction,
        request_id=stamp.request_id_hex,
        order_id=order_id,
        terms=terms,
        fixed_rate_bps=options.fixed_rate_bps,
        order=order,
        gas_currency=gas_currency,
        deposit_gas=deposit_gas,
        created_at=stamp.now,
        expires_at=expires_at,
        deposit_instructions=instructions,
        vault=vault,
        fee_payer=fee_payer,
    )
