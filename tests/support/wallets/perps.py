"""A user's wallet on the perps exchange: an eth-account key's signed actions (a quote's
authorization and deposit steps, signed by the exchange's own Python SDK,
`hyperliquid.utils.signing`, or by plain eth-account; transfers signed by the SDK), posted to
the exchange's `/exchange`."""

from __future__ import annotations

from typing import Any, Literal

import httpx
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from hyperliquid.utils import signing as exchange_sdk

from crossfill.devnet.exchange.process import ExchangeProcess
from crossfill.domain.eip712 import EIP712_DOMAIN, eip712_types

ZERO_ADDRESS = "0x" + "00" * 20
Signer = Literal["exchange-sdk", "eth-account"]


def sign_authorization(wallet: LocalAccount, item: dict[str, Any], signer: Signer) -> str:
    """The authorize step's EIP-712 `sign` data, signed; 0x-hex of 65 bytes."""
    sign = item["data"]["sign"]
    document = {
        "domain": sign["domain"],
        "types": {
            **sign["types"],
            **eip712_types(EIP712_DOMAIN),
        },
        "primaryType": sign["primaryType"],
        "message": sign["value"],
    }
    if signer == "exchange-sdk":
        parts = exchange_sdk.sign_inner(wallet, document)
        r, s = int(parts["r"], 16).to_bytes(32, "big"), int(parts["s"], 16).to_bytes(32, "big")
        return "0x" + r.hex() + s.hex() + f"{parts['v']:02x}"
    signed = wallet.sign_message(encode_typed_data(full_message=document))
    return "0x" + bytes(signed.signature).hex()


def signed_deposit(
    wallet: LocalAccount,
    item: dict[str, Any],
    signer: Signer,
    *,
    wallet_chain_id: int = 0x66EEE,
    **overrides: Any,
) -> dict[str, Any]:
    """`POST /exchange`'s body for the deposit step's `sendAsset` (its parameters changed by
    `overrides`, to post a wrong one), signed as the spec's flow describes."""
    data = item["data"]
    parameters = {**data["action"]["parameters"], **overrides}
    action = {"type": data["action"]["type"], **parameters}
    if signer == "exchange-sdk":
        # The SDK signs testnet actions under chain 0x66eee and sets hyperliquidChain itself.
        signature = exchange_sdk.sign_send_asset_action(
            wallet, action, parameters["hyperliquidChain"] == "Mainnet"
        )
    else:
        action["signatureChainId"] = hex(wallet_chain_id)
        signed = wallet.sign_message(
            encode_typed_data(
                full_message={
                    "domain": {
                        "name": "HyperliquidSignTransaction",
                        "version": "1",
                        "chainId": wallet_chain_id,
                        "verifyingContract": ZERO_ADDRESS,
                    },
                    "types": {
                        **data["eip712Types"],
                        **eip712_types(EIP712_DOMAIN),
                    },
                    "primaryType": data["eip712PrimaryType"],
                    "message": action,
                }
            )
        )
        signature = {"r": f"0x{signed.r:064x}", "s": f"0x{signed.s:064x}", "v": signed.v}
    return {"action": action, "nonce": parameters["nonce"], "signature": signature}


def post_to_exchange(exchange: ExchangeProcess, body: dict[str, Any]) -> dict[str, Any]:
    reply = httpx.post(f"{exchange.api_url}/exchange", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()
    return answer


def sdk_usd_send(wallet: LocalAccount, destination: str, amount: str, nonce: int) -> dict[str, Any]:
    """`POST /exchange`'s body for a usdSend signed by the exchange's own SDK (testnet)."""
    action = {"destination": destination, "amount": amount, "time": nonce, "type": "usdSend"}
    signature = exchange_sdk.sign_usd_transfer_action(wallet, action, False)
    return {"action": action, "nonce": nonce, "signature": signature, "vaultAddress": None,
            "expiresAfter": None}  # fmt: skip


def sdk_send_asset(
    wallet: LocalAccount, destination: str, amount: str, nonce: int, *, source_dex: str = "",
    destination_dex: str = "", token: str = "USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
) -> dict[str, Any]:  # fmt: skip
    action = {
        "type": "sendAsset", "destination": destination, "sourceDex": source_dex,
        "destinationDex": destination_dex, "token": token, "amount": amount,
        "fromSubAccount": "", "nonce": nonce,
    }  # fmt: skip
    signature = exchange_sdk.sign_send_asset_action(wallet, action, False)
    return {"action": action, "nonce": nonce, "signature": signature, "vaultAddress": None,
            "expiresAfter": None}  # fmt: skip


def sdk_spot_send(
    wallet: LocalAccount, destination: str, amount: str, token: str, nonce: int
) -> dict[str, Any]:
    action = {"destination": destination, "amount": amount, "token": token, "time": nonce,
              "type": "spotSend"}  # fmt: skip
    signature = exchange_sdk.sign_spot_transfer_action(wallet, action, False)
    return {"action": action, "nonce": nonce, "signature": signature, "vaultAddress": None,
            "expiresAfter": None}  # fmt: skip
