"""A perps-exchange action item: signed as the exchange's own wallets sign (EIP-712 under the
exchange's domain, on the chain id the action names) and posted to the exchange's API,
which answers `{"status": "ok"}` or `{"status": "err", "response": <why>}`."""

from __future__ import annotations

import httpx
from pydantic import JsonValue

from crossfill_client._execution.signatures import split_signature, typed_data
from crossfill_client._http import send_with_retries
from crossfill_client._retry import RetryPolicy
from crossfill_client.errors import ExchangeRefused, ResponseError
from crossfill_client.models._base import WireModel
from crossfill_client.models.quote import ExchangeActionData
from crossfill_client.signers import EvmSigner

# The exchange's EIP-712 domain: its name and version are the exchange's, not in the item.
DOMAIN_NAME = "HyperliquidSignTransaction"
DOMAIN_VERSION = "1"
ZERO_ADDRESS = "0x" + "00" * 20
# The chain id an action is signed on when the item names none (Arbitrum's, the exchange's
# own wallets' default).
DEFAULT_SIGNATURE_CHAIN_ID = 0xA4B1


class _ExchangeAnswer(WireModel):
    status: str
    response: JsonValue = None


def signed_action_body(
    signer: EvmSigner, item: ExchangeActionData, *, signature_chain_id: int | None = None
) -> dict[str, JsonValue]:
    """`POST /exchange`'s body: the action (with its `type` and `signatureChainId`), its
    nonce and the signature as {r, s, v}. `signature_chain_id` overrides the item's."""
    parameters = dict(item.action.parameters)
    named = parameters.get("signatureChainId")
    if signature_chain_id is None:
        named_id = int(named, 16) if isinstance(named, str) else None
        signature_chain_id = named_id or DEFAULT_SIGNATURE_CHAIN_ID
    action: dict[str, JsonValue] = {
        **parameters,
        "type": item.action.type,
        "signatureChainId": hex(signature_chain_id),
    }
    domain: dict[str, JsonValue] = {
        "name": DOMAIN_NAME,
        "version": DOMAIN_VERSION,
        "chainId": signature_chain_id,
        "verifyingContract": ZERO_ADDRESS,
    }
    document = typed_data(domain, item.eip712_types, item.eip712_primary_type, action)
    r, s, v = split_signature(signer.sign_typed_data(document))
    return {
        "action": action,
        "nonce": item.nonce,
        "signature": {"r": r, "s": s, "v": v},
        "vaultAddress": None,
        "expiresAfter": None,
    }


async def post_action(
    http: httpx.AsyncClient,
    exchange_url: str,
    body: dict[str, JsonValue],
    retry: RetryPolicy,
    *,
    step_id: str,
) -> None:
    """Post the signed action; `ExchangeRefused` unless the exchange says `ok`. Posting again
    is safe: the exchange takes a nonce once."""
    request = http.build_request("POST", exchange_url.rstrip("/") + "/exchange", json=body)
    response = await send_with_retries(http, request, retry, idempotent=True)
    try:
        answer = _ExchangeAnswer.model_validate_json(response.content)
    except ValueError as exc:
        raise ResponseError(f"the exchange answered {response.status_code}") from exc
    if answer.status != "ok":
        raise ExchangeRefused(str(answer.response), step_id=step_id)
