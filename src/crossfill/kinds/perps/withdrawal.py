"""Withdrawals from the perps exchange (chain 1337) to an EVM chain, planned (pure).

The user signs two things with one nonce (a fresh millisecond timestamp): a `NonceMapping`
(posted to `/authorize`: "my transfer with this nonce pays this request") and the exchange's
`sendAsset` action moving the amount to the solver's exchange account. The service matches
the transfer it sees on the solver's account by (sender, nonce) to the request and fills on
the EVM destination. The output is the input's USD value at the quoted prices, less the EVM
side's service fee; only `EXACT_INPUT` is quoted (the exchange transfer is the exact input).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from crossfill.config import ChainConfig
from crossfill.domain.nonce_mapping import NonceMapping
from crossfill.domain.order import InputRefund, Order, OrderInput, OrderOutput, OutputPayment
from crossfill.kinds.perps.quote import exchange_accounts
from crossfill.quoting import inputs
from crossfill.quoting.cross_vm import (
    QuotedCurrency,
    TransferTerms,
    priced_transfer,
    quoted_evm_currency,
)
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.fees import TradeType
from crossfill.quoting.money import format_units
from crossfill.quoting.request import QuoteRequest
from crossfill.types import Address, ChainId

REQUIRED_PROTOCOL_VERSION = "v2"
# `signatureChainId` of the authorize step unless the client overrides it (spec: default 1).
DEFAULT_SIGNATURE_CHAIN_ID = 1


@dataclass(frozen=True)
class PerpsWithdrawalSide:
    """What a withdrawal quote reads of the exchange: its chain, the solver's account there,
    the exchange network name the actions carry, and the one currency withdrawn (perps USDC)
    with the token name its actions use."""

    chain_id: int
    protocol_name: str
    solver_account: str
    network: str
    currency: QuotedCurrency
    token: str
    source_dex: str = ""
    destination_dex: str = ""


@dataclass(frozen=True)
class SendAssetParameters:
    """`action.parameters` of the deposit step, as the user signs and posts them."""

    network: str
    destination: str
    source_dex: str
    destination_dex: str
    token: str
    amount: str
    from_sub_account: str
    nonce: int

    def wire(self) -> dict[str, Any]:
        return {
            "hyperliquidChain": self.network,
            "destination": self.destination,
            "sourceDex": self.source_dex,
            "destinationDex": self.destination_dex,
            "token": self.token,
            "amount": self.amount,
            "fromSubAccount": self.from_sub_account,
            "nonce": self.nonce,
        }


@dataclass(frozen=True)
class PerpsWithdrawalContext:
    evm: ChainConfig
    perps: PerpsWithdrawalSide
    # The EVM currency's live USD price, when the service has one (else its configured one).
    evm_price: Decimal | None
    now: datetime
    ttl: timedelta
    request_id: bytes
    salt: int
    # The order's `solver`: the solver's EVM address (it fills on the destination).
    solver: str


@dataclass(frozen=True)
class PerpsWithdrawalQuote:
    request_id: str
    order: Order
    order_id: str
    terms: TransferTerms
    nonce: int
    send_asset: SendAssetParameters
    mapping: NonceMapping
    created_at: datetime
    expires_at: datetime


def _perps_currency(side: PerpsWithdrawalSide, address: str) -> QuotedCurrency:
    if address.lower() != side.currency.address.lower():
        raise QuoteError(
            "UNSUPPORTED_CURRENCY",
            f"originCurrency {address} is not withdrawn from chain {side.chain_id}: "
            f"only {side.currency.symbol} ({side.currency.address}) is",
        )
    return side.currency


def check_protocol_version(body: QuoteRequest, chain_id: int) -> None:
    """A withdrawal from the exchange exists only in the v2 protocol (two signatures)."""
    if body.protocol_version != REQUIRED_PROTOCOL_VERSION:
        given = "missing" if body.protocol_version is None else repr(body.protocol_version)
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            f"protocolVersion is {given}: a withdrawal from chain {chain_id} needs "
            f"protocolVersion {REQUIRED_PROTOCOL_VERSION}",
        )


def _order(context: PerpsWithdrawalContext, terms: TransferTerms, deadline: int) -> Order:
    currency_in, amount_in, refund_to = terms.currency_in, terms.amount_in, terms.refund_to
    currency_out, amount_out, recipient = terms.currency_out, terms.amount_out, terms.recipient
    perps, evm = context.perps, context.evm

    def raw(address: str) -> bytes:
        return bytes.fromhex(address.removeprefix("0x"))

    refund = InputRefund(
        chain_id=perps.protocol_name,
        recipient=raw(refund_to),
        currency=raw(currency_in.address),
        minimum_amount=0,
        deadline=deadline,
    )
    return Order(
        solver_chain_id=evm.protocol_name,
        solver=context.solver,
        salt=context.salt,
        inputs=(
            OrderInput(
                chain_id=perps.protocol_name,
                currency=raw(currency_in.address),
                amount=amount_in,
                refunds=(refund,),
            ),
        ),
        output=OrderOutput(
            chain_id=evm.protocol_name,
            payments=(
                OutputPayment(raw(recipient), raw(currency_out.address), amount_out, amount_out),
            ),
            deadline=deadline,
        ),
    )


def plan_perps_withdrawal(
    body: QuoteRequest, context: PerpsWithdrawalContext
) -> PerpsWithdrawalQuote:
    perps, evm = context.perps, context.evm
    check_protocol_version(body, perps.chain_id)
    if inputs.trade_type(body.trade_type) is not TradeType.EXACT_INPUT:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            f"withdrawals from chain {perps.chain_id} are quoted EXACT_INPUT only",
        )
    amount_in = inputs.amount(body.amount)
    accounts = exchange_accounts(body)
    user = accounts[0]
    currency_in = _perps_currency(perps, body.origin_currency)
    currency_out = quoted_evm_currency(
        evm, body.destination_currency, "destinationCurrency", context.evm_price
    )
    terms = priced_transfer(
        accounts, (currency_in, currency_out), amount_in, evm.fees.service_fee_bps
    )
    expires_at = context.now + context.ttl
    order = _order(context, terms, int(expires_at.timestamp()))
    request_id = "0x" + context.request_id.hex()
    # The exchange's nonce rule: a millisecond timestamp close to now, once per signer.
    nonce = int(context.now.timestamp() * 1000)
    send_asset = SendAssetParameters(
        network=perps.network,
        destination=perps.solver_account,
        source_dex=perps.source_dex,
        destination_dex=perps.destination_dex,
        token=perps.token,
        amount=format_units(amount_in, currency_in.decimals),
        from_sub_account="",
        nonce=nonce,
    )
    mapping = NonceMapping(
        wallet_chain_id=ChainId(perps.chain_id),
        wallet=Address(user),
        depositor=Address(user),
        request_id=request_id,
        nonce=nonce,
        signature_chain_id=ChainId(DEFAULT_SIGNATURE_CHAIN_ID),
    )
    return PerpsWithdrawalQuote(
        request_id=request_id,
        order=order,
        order_id="0x" + order.order_id().hex(),
        terms=terms,
        nonce=nonce,
        send_asset=send_asset,
        mapping=mapping,
        created_at=context.now,
        expires_at=expires_at,
    )
