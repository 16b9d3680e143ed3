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
from datetime import datetime
from decimal import Decimal
from typing import Any

from crossfill.domain.nonce_mapping import NonceMapping
from crossfill.domain.order import Order
from crossfill.kinds.perps.quote import exchange_accounts
from crossfill.quoting import inputs
from crossfill.quoting.cross_vm import (
    EvmSide,
    QuotedCurrency,
    QuoteStamp,
    TransferTerms,
    priced_transfer,
    quoted_evm_currency,
    transfer_order,
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
    evm: EvmSide
    perps: PerpsWithdrawalSide
    # The EVM currency's live USD price, when the service has one (else its configured one).
    evm_price: Decimal | None
    # The order's `solver` is the solver's EVM address (it fills on the destination).
    stamp: QuoteStamp


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
    stamp = context.stamp
    expires_at = stamp.expires_at
    order = transfer_order(terms, stamp, deadline=int(expires_at.timestamp()))
    request_id = stamp.request_id_hex
    # The exchange's nonce rule: a millisecond timestamp close to now, once per signer.
    nonce = int(stamp.now.timestamp() * 1000)
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
        created_at=stamp.now,
        expires_at=expires_at,
    )
