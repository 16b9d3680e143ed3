"""Screenshots of the explorer's main pages for docs/explorer.md, taken in Debian's headless
Chromium against the service on a fresh devnet after a few bridges and one refund:

    .venv/bin/python -m tests.support.explorer_screenshots [--out docs/explorer]

It writes list.png, request.png, refund.png and operator.png (desktop width) and
list-phone.png and request-phone.png (a phone's width). About a minute."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount
from playwright.sync_api import Browser, Page
from web3 import Web3

from crossfill.config import Deployment, load_deployment
from crossfill.contracts import calldata
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.network import DevnetOptions, start_devnet
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.registry import SECTIONS
from crossfill.settings import Mode
from tests.support.browser import DESKTOP, PHONE, chromium
from tests.support.service import ServiceThread, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps, send_item

TOKEN = "screenshots-operator-token"
NATIVE = "0x0000000000000000000000000000000000000000"
ENDED = ("success", "refund")


@contextmanager
def _service(home: Path) -> Iterator[tuple[ServiceThread, Deployment]]:
    path = home / "deployment.toml"
    network = start_devnet(DevnetOptions(block_time=0), deployment_path=path, log_dir=home)
    try:
        deployment = load_deployment(path, mode=Mode.DEVNET, sections=SECTIONS)
        settings = service_settings(home, path, admin_token=TOKEN)
        service = ServiceThread(settings, deployment, run_workers=True).start()
        try:
            yield service, deployment
        finally:
            service.stop()
    finally:
        network.stop()


class _Wallet:
    """A funded user bridging 0.1 ETH from the devnet's first chain to its second."""

    def __init__(self, http: httpx.Client, deployment: Deployment) -> None:
        self.http = http
        self.rpc_urls = {int(chain.id): chain.rpc_url for chain in evm_chains(deployment)}
        self.origin, self.destination = evm_chains(deployment)[0], evm_chains(deployment)[1]
        self.account: LocalAccount = Account.create()
        set_native_balance(self.origin.rpc_url, self.account.address, 10 * 10**18)

    def quote(self, wei: int) -> dict[str, Any]:
        body = {
            "user": self.account.address,
            "originChainId": self.origin.id,
            "destinationChainId": self.destination.id,
            "originCurrency": NATIVE,
            "destinationCurrency": NATIVE,
            "amount": str(wei),
            "tradeType": "EXACT_INPUT",
        }
        answers: list[httpx.Response] = []

        def quoted() -> bool:  # 503 until the chains' first heads are read
            answers.append(self.http.post("/quote/v2", json=body))
            return answers[-1].status_code != 503

        wait_for(quoted, timeout=20)
        answers[-1].raise_for_status()
        quote: dict[str, Any] = answers[-1].json()
        return quote

    def bridge(self, wei: int) -> str:
        quote = self.quote(wei)
        execute_steps(quote, self.account, self.rpc_urls)
        return self._ended(quote)

    def underpay(self, wei: int) -> str:
        """A deposit 1000 wei short of the quote's: refunded."""
        quote = self.quote(wei)
        order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
        short = int(quote["details"]["currencyIn"]["amount"]) - 1000
        item = {
            "to": self.origin.contracts.depository,
            "data": calldata.hex_data(calldata.deposit_native(self.account.address, order_id)),
            "value": str(short),
            "chainId": self.origin.id,
        }
        send_item(Web3(Web3.HTTPProvider(self.origin.rpc_url)), self.account, item)
        return self._ended(quote)

    def _ended(self, quote: dict[str, Any]) -> str:
        request_id: str = quote["steps"][0]["requestId"]

        def ended() -> bool:
            status = self.http.get("/intents/status/v3", params={"requestId": request_id})
            return bool(status.json()["status"] in ENDED)

        if not wait_for(ended, timeout=60, interval=0.25):
            raise RuntimeError(f"request {request_id} did not end")
        return request_id


def _shoot(page: Page, url: str, out: Path) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(out), full_page=True)
    print(f"wrote {out}")


def _take(browser: Browser, base_url: str, filled: str, refunded: str, out: Path) -> None:
    desktop = browser.new_context(viewport=DESKTOP)
    page = desktop.new_page()
    _shoot(page, f"{base_url}/explorer", out / "list.png")
    _shoot(page, f"{base_url}/explorer/requests/{filled}", out / "request.png")
    _shoot(page, f"{base_url}/explorer/requests/{refunded}", out / "refund.png")
    page.goto(f"{base_url}/explorer/operator")
    page.get_by_label("Operator token").fill(TOKEN)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(out / "operator.png"), full_page=True)
    print(f"wrote {out / 'operator.png'}")
    desktop.close()
    phone = browser.new_context(viewport=PHONE, is_mobile=True)
    page = phone.new_page()
    _shoot(page, f"{base_url}/explorer", out / "list-phone.png")
    _shoot(page, f"{base_url}/explorer/requests/{filled}", out / "request-phone.png")
    phone.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/explorer"))
    out: Path = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home, _service(Path(home)) as (service, deployment):
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            wallet = _Wallet(http, deployment)
            filled = ""
            for wei in (10**17, 25 * 10**16, 5 * 10**16):
                filled = wallet.bridge(wei)
            refunded = wallet.underpay(10**17)
        with chromium() as browser:
            _take(browser, service.base_url, filled, refunded, out)


if __name__ == "__main__":
    main()
