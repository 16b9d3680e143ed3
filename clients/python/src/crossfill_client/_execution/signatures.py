"""Signing: a signature item (EIP-712 or EIP-191, then posted to the service), and the EIP-712
documents wallets sign (the domain's type written out from the fields the domain has)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from crossfill_client._http import ServiceHttp
from crossfill_client.errors import ExecutionError
from crossfill_client.models.quote import SignatureData, TypedField
from crossfill_client.signers import EvmSigner, TypedData

# EIP-712's domain fields, in the order the standard lists them.
_DOMAIN_FIELDS = (
    ("name", "string"),
    ("version", "string"),
    ("chainId", "uint256"),
    ("verifyingContract", "address"),
    ("salt", "bytes32"),
)


def typed_data(
    domain: Mapping[str, JsonValue],
    types: Mapping[str, Sequence[TypedField]],
    primary_type: str,
    message: Mapping[str, JsonValue],
) -> TypedData:
    """The full EIP-712 document: `types` plus `EIP712Domain` for the fields `domain` has."""
    domain_type: list[JsonValue] = [
        {"name": name, "type": kind} for name, kind in _DOMAIN_FIELDS if name in domain
    ]
    all_types: dict[str, JsonValue] = {
        name: [{"name": field.name, "type": field.type} for field in fields]
        for name, fields in types.items()
    }
    all_types["EIP712Domain"] = domain_type
    return {
        "types": all_types,
        "domain": dict(domain),
        "primaryType": primary_type,
        "message": dict(message),
    }


def signature_of(signer: EvmSigner, data: SignatureData, *, step_id: str) -> str:
    sign = data.sign
    if sign.signature_kind == "eip712" and sign.primary_type is not None:
        return signer.sign_typed_data(
            typed_data(sign.domain, sign.types, sign.primary_type, sign.value)
        )
    if sign.signature_kind == "eip191" and sign.message is not None:
        return signer.sign_message(sign.message)
    raise ExecutionError(f"cannot sign a {sign.signature_kind!r} item", step_id=step_id)


async def sign_and_post(
    service: ServiceHttp, signer: EvmSigner, data: SignatureData, *, step_id: str
) -> None:
    """Sign the item and send its `post` body to its endpoint, the signature as `?signature=`."""
    signature = signature_of(signer, data, step_id=step_id)
    post = data.post
    await service.call(
        post.method.upper(), post.endpoint, params={"signature": signature}, json=post.body
    )


def split_signature(signature: str) -> tuple[str, str, int]:
    """(r, s, v) of a 65-byte 0x-hex signature; v as a number (27 or 28)."""
    raw = bytes.fromhex(signature.removeprefix("0x"))
    if len(raw) != 65:
        raise ValueError(f"a signature is 65 bytes, not {len(raw)}")
    v = raw[64] if raw[64] >= 27 else raw[64] + 27
    return "0x" + raw[:32].hex(), "0x" + raw[32:64].hex(), v
