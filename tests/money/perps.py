"""The perps exchange as the checker reads it: the solver account's own ledger
(`userNonFundingLedgerUpdates`, a plain POST to the exchange's info endpoint) from a starting
time in milliseconds.

A deposit is a transfer into the solver's account from another (`usdSend`, `spotSend` or
`sendAsset`), in the currency its ledger entry names: perps USDC for a `usdSend` or a
`sendAsset` into the perps DEX, else the deployment's spot currency of that token on the DEX it
lands on. A transfer names no order: which request it pays is the records' word (the sender's
nonce mapping). A transfer out of the account must be a fill the perps payer journalled
(`perps_payments`, found by its signer and nonce, purpose `fill`) paying the request's
recipient its quoted output, or the refund a deposit records (by the entry's hash) paying the
depositor or the request's `refundTo` what the service says. The devnet exchange answers every
entry at once; the real one caps an answer, which this reader does not page through.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx

from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.kinds.perps.watcher import UNKNOWN_TOKEN
from crossfill.store.tables import Deposit
from crossfill.workers.leased_fills import FILL
from tests.money.ledger import ChainDeposit, Shown
from tests.money.records import Records

_TRANSFERS = frozenset({"internalTransfer", "spotTransfer", "send"})


@dataclass(frozen=True)
class LedgerTransfer:
    hash: str
    time_ms: int
    sender: str
    destination: str
    currency: str  # a 1337 address, or UNKNOWN_TOKEN for a token the deployment does not list
    amount: int  # in the currency's smallest unit (0 for an unknown token)
    nonce: int | None

    @property
    def landed(self) -> tuple[str, int]:
        return self.currency, self.amount


def ledger_entries(exchange: PerpsExchangeConfig, start_ms: int) -> list[dict[str, Any]]:
    reply = httpx.post(
        f"{str(exchange.api_url).rstrip('/')}/info",
        json={
            "type": "userNonFundingLedgerUpdates",
            "user": exchange.solver.address,
            "startTime": start_ms,
        },
        timeout=10,
    )
    reply.raise_for_status()
    entries: list[dict[str, Any]] = reply.json()
    return entries


def ledger_head(exchange: PerpsExchangeConfig) -> int:
    """Where a check of what follows starts: past the account's newest entry."""
    return max((int(entry["time"]) for entry in ledger_entries(exchange, 0)), default=-1) + 1


class ExchangeAccountLedger:
    """The solver account's transfers from `start_ms` on."""

    def __init__(self, exchange: PerpsExchangeConfig, start_ms: int) -> None:
        self.chain_id = exchange.id
        self.exchange = exchange
        self.start_ms = start_ms
        self.account = exchange.solver.address.lower()
        self.transfers = self._read()
        self.deposits = [
            ChainDeposit(exchange.id, transfer.hash, 0, "", transfer.sender, *transfer.landed)
            for transfer in self.transfers.values()
            if transfer.destination == self.account and transfer.sender != self.account
        ]

    def _read(self) -> dict[str, LedgerTransfer]:
        read = {}
        for entry in ledger_entries(self.exchange, self.start_ms):
            delta = entry["delta"]
            if delta.get("type") not in _TRANSFERS:
                continue
            currency, amount = _landed(delta, self.exchange)
            read[str(entry["hash"])] = LedgerTransfer(
                hash=str(entry["hash"]), time_ms=int(entry["time"]),
                sender=str(delta["user"]).lower(), destination=str(delta["destination"]).lower(),
                currency=currency, amount=amount,
                nonce=delta["nonce"] if isinstance(delta.get("nonce"), int) else None,
            )  # fmt: skip
        return read

    def _sent(self) -> list[LedgerTransfer]:
        return [
            transfer
            for transfer in self.transfers.values()
            if transfer.sender == self.account and transfer.destination != self.account
        ]

    def shown(self, records: Records) -> Shown:
        """Each transfer out the payer journalled as a fill, checked to pay the request's
        recipient its quoted output; every other one is left for a refund to explain."""
        shown = Shown()
        for transfer in self._sent():
            attempt = (
                records.perps_payments.get((self.account, transfer.nonce))
                if transfer.nonce is not None
                else None
            )
            request = records.requests.get(attempt.payment_key) if attempt else None
            if attempt is None or attempt.purpose != FILL or request is None:
                shown.payouts.add(transfer.hash)
                continue
            shown.fills[request.order_id] += 1
            quoted = (request.recipient.lower(), request.destination_currency, request.amount_out)
            paid = (transfer.destination, transfer.currency, str(transfer.amount))
            if paid != quoted:
                shown.broken.append(
                    f"fill {self.chain_id}:{transfer.hash} of request {request.id} pays "
                    f"{paid}; {quoted} was quoted"
                )
        return shown

    def refund_paid(self, deposit: ChainDeposit, part: Deposit, records: Records) -> int | None:
        """What the refund's ledger entry paid the depositor (or the request's `refundTo`)
        from the solver's account, in the deposit's currency."""
        refund = str(part.refund_tx_hash)
        if refund not in self.transfers:
            self.transfers = self._read()  # credited after this check read the ledger
        transfer = self.transfers.get(refund)
        request = records.requests.get(part.request_id) if part.request_id else None
        recipients = {deposit.depositor.lower(), *([request.refund_to.lower()] if request else [])}
        if transfer is None or transfer.sender != self.account:
            return None
        if transfer.destination not in recipients or transfer.currency != deposit.currency:
            return None
        return transfer.amount

    def paid_back_too(self, deposit: ChainDeposit, part: Deposit) -> bool:
        return False  # every transfer out of the account is matched to one record


def _landed(delta: dict[str, Any], exchange: PerpsExchangeConfig) -> tuple[str, int]:
    """The currency and amount the transfer's receiving side got: perps USDC, or a spot
    token on the DEX it lands on (a `spotSend` lands on the spot DEX)."""
    if delta["type"] == "internalTransfer":
        return _units(PERPS_USDC_ADDRESS, delta["usdc"], PERPS_USDC_DECIMALS)
    token = str(delta["token"]).partition(":")[0]
    dex = "spot" if delta["type"] == "spotTransfer" else str(delta.get("destinationDex", ""))
    if dex == "" and token == "USDC":
        return _units(PERPS_USDC_ADDRESS, delta["amount"], PERPS_USDC_DECIMALS)
    spot_dex = "" if dex == "spot" else dex
    for spot in exchange.spot_currencies:
        if spot.exchange_name == token and spot.dex == spot_dex:
            return _units(spot.address, delta["amount"], spot.decimals)
    return UNKNOWN_TOKEN, 0


def _units(currency: str, amount: object, decimals: int) -> tuple[str, int]:
    scaled = Decimal(str(amount)).scaleb(decimals)
    if scaled != scaled.to_integral_value():
        return UNKNOWN_TOKEN, 0  # finer than the currency: no amount of it
    return currency, int(scaled)
