"""A wallet's two signatures of a withdrawal from the perps exchange, by the exchange's own
Python SDK (`hyperliquid.utils.signing`) or by plain eth-account; the exchange in a deployment
file for the CLI."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

import httpx
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from hyperliquid.utils import signing as exchange_sdk

from crossfill.devnet.deployment_file import write_deployment
from crossfill.devnet.exchange.deployment import perps_document
from crossfill.devnet.exchange.process import ExchangeProcess
from tests.conftest import RunningDevnet
from tests.support.service import run_cli

ZERO_ADDRESS = "0x" + "00" * 20
Signer = Literal["exchange-sdk", "eth-account"]


def deployment_file(devnet: RunningDevnet, exchange: ExchangeProcess, home: Path) -> Path:
    """The session devnet's deployment file plus the exchange's `[perps]`, for the CLI."""
    document = tomllib.loads(devnet.deployment_path.read_text())
    document["perps"] = perps_document(api_url=exchange.api_url)
    path = home / "deployment.toml"
    write_deployment(path, document)
    return path


def fund_on_exchange(deployment_path: Path, home: Path, user: str, **funds: str) -> None:
    """`crossfill devnet fund-exchange --usd AMOUNT` (or `--token NAME --amount AMOUNT`), as an
    operator runs it."""
    options = [part for name, value in funds.items() for part in (f"--{name}", value)]
    run = run_cli(
        "devnet", "fund-exchange", "--user", user, *options, home=home,
        deployment_file=deployment_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


def sign_authorization(wallet: LocalAccount, item: dict[str, Any], signer: Signer) -> str:
    """The authorize step's EIP-712 `sign` data, signed; 0x-hex of 65 bytes."""
    sign = item["data"]["sign"]
    document = {
        "domain": sign["domain"],
        "types": {
            **sign["types"],
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
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
                        "EIP712Domain": [
                            {"name": "name", "type": "string"},
                            {"name": "version", "type": "string"},
                            {"name": "chainId", "type": "uint256"},
                            {"name": "verifyingContract", "type": "address"},
                        ],
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
