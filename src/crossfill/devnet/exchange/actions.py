"""What the devnet exchange does with a posted `POST /exchange` body: read it, check the
signature and the chain, work out the legs of the transfer, and apply it to the ledger."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crossfill.devnet.exchange.ledger import ExchangeLedger, Leg, Refused
from crossfill.devnet.exchange.tokens import (
    LEDGER_DECIMALS,
    PERPS_DEX,
    PERPS_USD_DECIMALS,
    SPOT_DEX,
    USDC,
    SpotToken,
    spot_token,
)
from crossfill.kinds.perps.actions import (
    MalformedAction,
    SendAsset,
    SpotSend,
    UsdSend,
    UserAction,
    format_amount,
    parse_action,
    parse_amount,
    parse_signature,
    recover_signer,
)
from crossfill.types import ExchangeChain


@dataclass(frozen=True)
class Exchange:
    ledger: ExchangeLedger
    exchange_chain: ExchangeChain

    def post(self, body: object, *, now_ms: int) -> str:
        """Apply a posted user-signed action; its hash. `Refused` with the answer's message."""
        if not isinstance(body, Mapping):
            raise Refused("Failed to deserialize the JSON body")
        try:
            action = parse_action(body.get("action"))
            signature = parse_signature(body.get("signature"))
            signer = recover_signer(action, signature)
        except MalformedAction as malformed:
            raise Refused(str(malformed)) from None
        if body.get("nonce") != action.nonce:
            raise Refused("Invalid nonce: the request's nonce differs from the signed action's")
        if action.exchange_chain != self.exchange_chain:
            raise Refused(f"This exchange is {self.exchange_chain}; the action is signed for "
                          f"{action.exchange_chain}")  # fmt: skip
        if not self.ledger.known(signer):
            raise Refused(f"User or API Wallet {signer.lower()} does not exist.")
        source, destination, delta = _legs(action, signer)
        return self.ledger.transfer(
            signer=signer, action=action, source=source, destination=destination,
            delta=delta, now_ms=now_ms,
        )  # fmt: skip


def _legs(action: UserAction, signer: str) -> tuple[Leg, Leg, dict[str, object]]:
    if isinstance(action, UsdSend):
        units = _units(action.amount, PERPS_USD_DECIMALS)
        leg = Leg(PERPS_DEX, USDC.name, units)
        delta = {
            "type": "internalTransfer", "usdc": action.amount, "user": signer.lower(),
            "destination": action.destination.lower(), "fee": "0.0", "nonce": action.nonce,
        }  # fmt: skip
        return leg, leg, delta
    token = _token(action.token)
    if isinstance(action, SpotSend):
        leg = Leg(SPOT_DEX, token.name, _units(action.amount, token.wei_decimals))
        delta = {
            "type": "spotTransfer", "token": token.name, "amount": action.amount,
            "usdcValue": action.amount if token is USDC else "0.0", "user": signer.lower(),
            "destination": action.destination.lower(), "fee": "0.0", "nativeTokenFee": "0.0",
            "nonce": action.nonce,
        }  # fmt: skip
        return leg, leg, delta
    return _send_asset_legs(action, token, signer)


def _send_asset_legs(
    action: SendAsset, token: SpotToken, signer: str
) -> tuple[Leg, Leg, dict[str, object]]:
    if action.from_sub_account:
        raise Refused("Sub-accounts are not supported on the devnet exchange")
    for dex in (action.source_dex, action.destination_dex):
        if dex not in (PERPS_DEX, SPOT_DEX):
            raise Refused(f"Unknown dex {dex!r}")
    touches_perps = PERPS_DEX in (action.source_dex, action.destination_dex)
    if touches_perps and token is not USDC:
        raise Refused("Token must be the collateral token (USDC) to or from a perp dex")
    decimals = PERPS_USD_DECIMALS if touches_perps else token.wei_decimals
    units = _units(action.amount, decimals)
    delta = {
        "type": "send", "user": signer.lower(), "destination": action.destination.lower(),
        "sourceDex": action.source_dex, "destinationDex": action.destination_dex,
        "token": token.name, "amount": action.amount,
        "usdcValue": action.amount if token is USDC else "0.0", "fee": "0.0",
        "nativeTokenFee": "0.0", "nonce": action.nonce,
    }  # fmt: skip
    return (
        Leg(action.source_dex, token.name, units),
        Leg(action.destination_dex, token.name, units),
        delta,
    )


def _token(wire: str) -> SpotToken:
    token = spot_token(wire)
    if token is None:
        raise Refused(f"Unknown token {wire!r}")
    return token


def _units(amount: str, decimals: int) -> int:
    try:
        units = parse_amount(amount, decimals)
    except ValueError as exc:
        raise Refused(f"Invalid amount: {exc}") from None
    if units == 0:
        raise Refused("Invalid amount: must be positive")
    return units * int(10 ** (LEDGER_DECIMALS - decimals))


def display(units: int) -> str:
    """Ledger units as the exchange shows amounts: a decimal string with at least one
    decimal ("0.0", "12.5")."""
    text = format_amount(units, LEDGER_DECIMALS)
    return text if "." in text else f"{text}.0"
