"""The perps exchange's user-signed transfer actions: EIP-712 typed data, signing, recovery.

Both sides use it: the solver signs its transfers (`sign_action`) and the devnet exchange
verifies what it is sent (`parse_action`, `recover_signer`). The byte-level names are the
real exchange's (an EIP-712 type string must match to the byte, so no neutral name here):
domain `HyperliquidSignTransaction` version 1 on chain `int(signatureChainId, 16)` with the
zero verifying contract; primary types `HyperliquidTransaction:UsdSend`, `...:SpotSend`,
`...:SendAsset`. The signed message is the action's own fields (its `type` and
`signatureChainId` ride along in the message but are not typed fields, so they are not
signed). `usdSend` and `spotSend` carry their nonce as `time`; `sendAsset` as `nonce`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Final, cast

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_utils.address import is_address, to_checksum_address

from crossfill.domain.eip712 import EIP712_DOMAIN, eip712_domain, eip712_types
from crossfill.types import ExchangeChain  # re-exported: the actions name it

EXCHANGE_CHAINS: Final = ("Mainnet", "Testnet")
DOMAIN_NAME: Final = "HyperliquidSignTransaction"
DOMAIN_VERSION: Final = "1"
CHAIN_FIELD: Final = "hyperliquidChain"
_UINT64_LIMIT: Final = 2**64
_DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")
_HEX_CHAIN_ID = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
_HEX_32 = re.compile(r"^0x[0-9a-fA-F]{1,64}$")  # the SDK drops leading zeros


class MalformedAction(ValueError):
    """The action or its signature is not one this module can read; the message says why."""


@dataclass(frozen=True)
class _Transfer:
    """Fields every user-signed transfer shares; subclasses add theirs in signing order."""

    kind: ClassVar[str]
    primary_type: ClassVar[str]
    # (field name on the wire, EIP-712 type), in the order the type string lists them.
    typed_fields: ClassVar[tuple[tuple[str, str], ...]]

    exchange_chain: ExchangeChain
    signature_chain_id: int
    destination: str
    amount: str

    def field_values(self) -> dict[str, object]:
        """The typed fields' values by wire name, in signing order."""
        raise NotImplementedError

    @property
    def nonce(self) -> int:
        raise NotImplementedError

    @property
    def eip712_types(self) -> dict[str, list[dict[str, str]]]:
        """The action's own type (no `EIP712Domain`), as a quote's step item carries it."""
        return {self.primary_type: [{"name": n, "type": t} for n, t in self.typed_fields]}

    def wire(self) -> dict[str, object]:
        """The action as posted to the exchange (and as signed, with `type` and
        `signatureChainId` beside the typed fields)."""
        return {
            "type": self.kind,
            "signatureChainId": hex(self.signature_chain_id),
            **self.field_values(),
        }


@dataclass(frozen=True)
class UsdSend(_Transfer):
    """Perps USDC from the signer's perps account to `destination`'s."""

    kind: ClassVar[str] = "usdSend"
    primary_type: ClassVar[str] = "HyperliquidTransaction:UsdSend"
    typed_fields: ClassVar[tuple[tuple[str, str], ...]] = (
        (CHAIN_FIELD, "string"), ("destination", "string"), ("amount", "string"),
        ("time", "uint64"),
    )  # fmt: skip

    time: int

    def field_values(self) -> dict[str, object]:
        return {CHAIN_FIELD: self.exchange_chain, "destination": self.destination,
                "amount": self.amount, "time": self.time}  # fmt: skip

    @property
    def nonce(self) -> int:
        return self.time


@dataclass(frozen=True)
class SpotSend(_Transfer):
    """A spot token (`token` is `NAME:0x<tokenId>`) from the signer's spot account."""

    kind: ClassVar[str] = "spotSend"
    primary_type: ClassVar[str] = "HyperliquidTransaction:SpotSend"
    typed_fields: ClassVar[tuple[tuple[str, str], ...]] = (
        (CHAIN_FIELD, "string"), ("destination", "string"), ("token", "string"),
        ("amount", "string"), ("time", "uint64"),
    )  # fmt: skip

    token: str
    time: int

    def field_values(self) -> dict[str, object]:
        return {CHAIN_FIELD: self.exchange_chain, "destination": self.destination,
                "token": self.token, "amount": self.amount, "time": self.time}  # fmt: skip

    @property
    def nonce(self) -> int:
        return self.time


@dataclass(frozen=True)
class SendAsset(_Transfer):
    """A token between DEXs and accounts: `sourceDex`/`destinationDex` are "" (perps) or
    "spot" (or a third-party DEX's name); `token` is `NAME:0x<tokenId>`."""

    kind: ClassVar[str] = "sendAsset"
    primary_type: ClassVar[str] = "HyperliquidTransaction:SendAsset"
    typed_fields: ClassVar[tuple[tuple[str, str], ...]] = (
        (CHAIN_FIELD, "string"), ("destination", "string"), ("sourceDex", "string"),
        ("destinationDex", "string"), ("token", "string"), ("amount", "string"),
        ("fromSubAccount", "string"), ("nonce", "uint64"),
    )  # fmt: skip

    source_dex: str
    destination_dex: str
    token: str
    from_sub_account: str
    nonce_value: int

    def field_values(self) -> dict[str, object]:
        return {
            CHAIN_FIELD: self.exchange_chain, "destination": self.destination,
            "sourceDex": self.source_dex, "destinationDex": self.destination_dex,
            "token": self.token, "amount": self.amount,
            "fromSubAccount": self.from_sub_account, "nonce": self.nonce_value,
        }  # fmt: skip

    @property
    def nonce(self) -> int:
        return self.nonce_value


UserAction = UsdSend | SpotSend | SendAsset
ACTION_KINDS: Final[dict[str, type[UsdSend] | type[SpotSend] | type[SendAsset]]] = {
    kind.kind: kind for kind in (UsdSend, SpotSend, SendAsset)
}


@dataclass(frozen=True)
class SignatureParts:
    r: str
    s: str
    v: int

    def wire(self) -> dict[str, object]:
        return {"r": self.r, "s": self.s, "v": self.v}


@dataclass(frozen=True)
class SignedAction:
    action: UserAction
    signature: SignatureParts

    @property
    def nonce(self) -> int:
        return self.action.nonce

    def request_body(self) -> dict[str, object]:
        """`POST /exchange`'s body, as the exchange's own SDK sends a user-signed action."""
        return {
            "action": self.action.wire(),
            "nonce": self.nonce,
            "signature": self.signature.wire(),
            "vaultAddress": None,
            "expiresAfter": None,
        }


def typed_data(action: UserAction) -> dict[str, Any]:
    """The full EIP-712 document (domain, types with `EIP712Domain`, primary type, message)."""
    return {
        "domain": eip712_domain(DOMAIN_NAME, DOMAIN_VERSION, action.signature_chain_id),
        "types": {**action.eip712_types, **eip712_types(EIP712_DOMAIN)},
        "primaryType": action.primary_type,
        "message": action.wire(),
    }


def sign_action(action: UserAction, account: LocalAccount) -> SignedAction:
    signed = account.sign_message(encode_typed_data(full_message=typed_data(action)))
    return SignedAction(
        action,
        SignatureParts(r=f"0x{signed.r:064x}", s=f"0x{signed.s:064x}", v=int(signed.v)),
    )


def recover_signer(action: UserAction, signature: SignatureParts) -> str:
    """The checksummed address that signed `action`; MalformedAction if none can be."""
    v = signature.v + 27 if signature.v in (0, 1) else signature.v
    try:
        address: str = Account.recover_message(
            encode_typed_data(full_message=typed_data(action)),
            vrs=(v, int(signature.r, 16), int(signature.s, 16)),
        )
    except Exception as exc:  # eth-keys raises several types for a bad (r, s, v)
        raise MalformedAction("Invalid signature") from exc
    return address


def parse_signature(wire: object) -> SignatureParts:
    if not isinstance(wire, Mapping):
        raise MalformedAction("Missing signature")
    r, s, v = wire.get("r"), wire.get("s"), wire.get("v")
    if not (isinstance(r, str) and _HEX_32.match(r) and isinstance(s, str) and _HEX_32.match(s)):
        raise MalformedAction("Invalid signature: r and s must be hex strings of at most 32 bytes")
    if isinstance(v, bool) or not isinstance(v, int) or v not in (0, 1, 27, 28):
        raise MalformedAction("Invalid signature: v must be 27 or 28")
    return SignatureParts(r=r, s=s, v=v)


def parse_action(wire: object) -> UserAction:
    """A posted action read into its typed form; MalformedAction names what is wrong."""
    if not isinstance(wire, Mapping):
        raise MalformedAction("action must be an object")
    kind = ACTION_KINDS.get(str(wire.get("type")))
    if kind is None:
        raise MalformedAction(f"Unsupported action type {wire.get('type')!r}")
    allowed = {"type", "signatureChainId", *dict(kind.typed_fields)}
    unknown = sorted(set(wire) - allowed)
    if unknown:
        raise MalformedAction(f"Unknown field {unknown[0]!r} in {kind.kind}")
    chain_id = wire.get("signatureChainId")
    if not isinstance(chain_id, str) or not _HEX_CHAIN_ID.match(chain_id):
        raise MalformedAction("signatureChainId must be a hex string such as 0x66eee")
    values = _typed_values(wire, kind.typed_fields)
    common = {
        "exchange_chain": cast(ExchangeChain, values[CHAIN_FIELD]),
        "signature_chain_id": int(chain_id, 16),
        "destination": values["destination"],
        "amount": values["amount"],
    }
    if kind is UsdSend:
        return UsdSend(**common, time=values["time"])
    if kind is SpotSend:
        return SpotSend(**common, token=values["token"], time=values["time"])
    return SendAsset(
        **common,
        source_dex=values["sourceDex"],
        destination_dex=values["destinationDex"],
        token=values["token"],
        from_sub_account=values["fromSubAccount"],
        nonce_value=values["nonce"],
    )


def _typed_values(
    wire: Mapping[str, object], typed_fields: tuple[tuple[str, str], ...]
) -> dict[str, Any]:
    values = {name: _field(wire, name, solidity_type) for name, solidity_type in typed_fields}
    if values[CHAIN_FIELD] not in EXCHANGE_CHAINS:
        raise MalformedAction(f"{CHAIN_FIELD} must be Mainnet or Testnet")
    if not is_address(values["destination"]):
        raise MalformedAction("destination must be a 0x-prefixed 20-byte hex address")
    if not _DECIMAL.match(str(values["amount"])):
        raise MalformedAction("amount must be a decimal string such as 12.5")
    return values


def _field(wire: Mapping[str, object], name: str, solidity_type: str) -> object:
    if name not in wire:
        raise MalformedAction(f"Missing field {name!r}")
    value = wire[name]
    if solidity_type == "string":
        if not isinstance(value, str):
            raise MalformedAction(f"{name} must be a string")
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < _UINT64_LIMIT:
        raise MalformedAction(f"{name} must be an unsigned 64-bit integer")
    return value


def format_amount(units: int, decimals: int) -> str:
    """An integer amount in the smallest unit as the exchange's decimal string ("12.5")."""
    if units < 0:
        raise ValueError("amount must not be negative")
    text = format(Decimal(units).scaleb(-decimals), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def parse_amount(text: str, decimals: int) -> int:
    """The exchange's decimal string in the smallest unit; ValueError beyond `decimals`."""
    if not _DECIMAL.match(text):
        raise ValueError("amount must be a decimal string such as 12.5")
    try:
        scaled = Decimal(text).scaleb(decimals)
    except InvalidOperation as exc:
        raise ValueError("amount is not a number") from exc
    if scaled != scaled.to_integral_value():
        raise ValueError(f"amount has more than {decimals} decimals")
    return int(scaled)


def checksummed(address: str) -> str:
    return str(to_checksum_address(address))
