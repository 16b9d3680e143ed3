"""The devnet perps exchange beside the session devnet, and a wallet's two signatures of a
withdrawal from it: by the exchange's own Python SDK (`hyperliquid.utils.signing`) or by plain
eth-account."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import httpx
from eth_account.messages import encode_typed_data
from eth_account.signers.local import LocalAccount
from hyperliquid.utils import signing as exchange_sdk

from crossfill.config import load_deployment
from crossfill.devnet.deployment_file import write_deployment
from crossfill.devnet.exchange.deployment import perps_document, seed_exchange
from crossfill.devnet.exchange.process import start_exchange
from crossfill.settings import Mode
from tests.conftest import RunningDevnet
from tests.e2e.bridging import run_cli

PERPS = 1337
PERPS_USDC = "0x" + "0" * 32
ZERO_ADDRESS = "0x" + "00" * 20
Signer = Literal["exchange-sdk", "eth-account"]


@contextmanager
def devnet_with_exchange(devnet: RunningDevnet, home: Path) -> Iterator[RunningDevnet]:
    """The session devnet's chains plus a devnet exchange of its own (`[perps]`), as
    `crossfill devnet --exchange` describes it."""
    exchange = start_exchange(state_path=home / "exchange-state.sqlite3", log_dir=home)
    try:
        seed_exchange(exchange.api_url)
        document = tomllib.loads(devnet.deployment_path.read_text())
        document["perps"] = perps_document(api_url=exchange.api_url)
        path = home / "deployment.toml"
        write_deployment(path, document)
        yield RunningDevnet(devnet.network, load_deployment(path, mode=Mode.DEVNET), path)
    finally:
        exchange.stop()


def exchange_url(devnet: RunningDevnet) -> str:
    assert devnet.deployment.perps is not None
    return devnet.deployment.perps.api_url


def fund_on_exchange(devnet: RunningDevnet, home: Path, user: str, usd: str) -> None:
    """`crossfill devnet fund-exchange`, as an operator runs it."""
    run = run_cli(
        "devnet", "fund-exchange", "--user", user, "--usd", usd,
        home=home, deployment_path=devnet.deployment_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


def withdrawable(devnet: RunningDevnet, user: str) -> Decimal:
    """The user's perps USD on the exchange (`clearinghouseState.withdrawable`)."""
    reply = httpx.post(
        f"{exchange_url(devnet)}/info",
        json={"type": "clearinghouseState", "user": user},
        timeout=10,
    )
    assert reply.status_code == 200, reply.text
    return Decimal(reply.json()["withdrawable"])


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


def post_to_exchange(devnet: RunningDevnet, body: dict[str, Any]) -> dict[str, Any]:
    reply = httpx.post(f"{exchange_url(devnet)}/exchange", json=body, timeout=10)
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()
    return answer
