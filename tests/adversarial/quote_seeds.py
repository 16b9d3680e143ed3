"""Valid quote bodies of every kind the service quotes, on the test devnet (EVM chains, the SVM
node and the perps exchange): each is answered 200 as it stands, so a mutation of one reaches as
far into planning as the mutated field lets it. Taken from the e2e suites' own bodies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_account import Account

from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.evm.config import evm_chain
from tests.adversarial.cross_vm import PERPS_ID, PERPS_USDC, SOL, SVM_ID
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, usdc

ETHER = 10**18
USDC = 10**6


@dataclass(frozen=True)
class Seed:
    """A valid body of one kind of quote; `kind` groups the seeds the fuzzer must see succeed."""

    kind: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Addresses:
    """Addresses of every kind the devnet knows: what mutations swap fields for."""

    evm_user: str
    evm_recipient: str
    svm_user: str
    svm_recipient: str
    origin_usdc: str
    destination_usdc: str
    weth: str
    svm_usdc: str

    @property
    def currencies(self) -> tuple[str, ...]:
        return (NATIVE, self.origin_usdc, self.destination_usdc, self.weth, SOL,
                self.svm_usdc, PERPS_USDC)  # fmt: skip

    @property
    def accounts(self) -> tuple[str, ...]:
        return (self.evm_user, self.evm_recipient, self.svm_user, self.svm_recipient)


def devnet_addresses(devnet: RunningDevnet, seeded: SeededSvm) -> Addresses:
    origin = evm_chain(devnet.deployment, ORIGIN)
    assert origin is not None and origin.contracts.weth is not None
    users = svm_accounts.users()
    return Addresses(
        evm_user=Account.create().address,
        evm_recipient=Account.create().address,
        svm_user=str(users[0].pubkey()),
        svm_recipient=str(users[1].pubkey()),
        origin_usdc=usdc(devnet, ORIGIN),
        destination_usdc=usdc(devnet, DESTINATION),
        weth=origin.contracts.weth,
        svm_usdc=str(seeded.usdc_mint),
    )


def route_body(
    origin: tuple[int, str],
    destination: tuple[int, str],
    amount: int,
    user: str,
    recipient: str,
    **more: Any,
) -> dict[str, Any]:
    """A quote body: (chain, currency) at each end, the amount exact in, any other fields."""
    return {
        "user": user, "recipient": recipient, "originChainId": origin[0],
        "originCurrency": origin[1], "destinationChainId": destination[0],
        "destinationCurrency": destination[1], "amount": str(amount),
        "tradeType": "EXACT_INPUT", **more,
    }  # fmt: skip


def seeds(at: Addresses) -> tuple[Seed, ...]:
    """One or more valid bodies per kind: EVM bridges and swaps, `txs`, app fees, deposit
    addresses, to and from the SVM chain, to and from the perps exchange."""
    user, recipient = at.evm_user, at.evm_recipient
    eth_in, eth_out = (ORIGIN, NATIVE), (DESTINATION, NATIVE)
    usdc_in, usdc_out = (ORIGIN, at.origin_usdc), (DESTINATION, at.destination_usdc)
    sol, svm_usdc = (SVM_ID, SOL), (SVM_ID, at.svm_usdc)
    perps_usdc = (PERPS_ID, PERPS_USDC)
    call = {"to": recipient, "value": str(ETHER // 10), "data": "0x"}
    app_fees = [
        {"recipient": at.accounts[0], "fee": "100"},
        {"recipient": at.accounts[1], "fee": "25"},
    ]
    evm = (
        route_body(eth_in, eth_out, ETHER // 10, user, recipient),
        route_body(usdc_in, usdc_out, 20 * USDC, user, recipient, slippageTolerance="50"),
        route_body(eth_in, usdc_out, ETHER // 4, user, recipient),
        route_body(eth_in, usdc_in, ETHER // 4, user, recipient),
        route_body(
            eth_in,
            usdc_out,
            50 * USDC,
            user,
            recipient,
            tradeType="EXACT_OUTPUT",
            topupGas=True,
            includeProtocolData=True,
        ),
    )
    deposit_addresses = (
        route_body(
            eth_in, eth_out, ETHER // 10, user, recipient, useDepositAddress=True, refundTo=user
        ),
        route_body(
            usdc_in, usdc_out, 100 * USDC, user, recipient, useDepositAddress=True, strict=True
        ),
    )
    svm = (
        route_body(eth_in, sol, 10**17, user, at.svm_recipient),
        route_body(usdc_in, svm_usdc, 20 * USDC, user, at.svm_recipient),
        route_body(sol, eth_out, 2 * 10**9, at.svm_user, recipient, maxRouteLength=4),
        route_body(svm_usdc, usdc_out, 30 * USDC, at.svm_user, recipient, fixedRate="100"),
    )
    perps = (
        route_body(usdc_in, perps_usdc, 20 * USDC, user, recipient),
        route_body(eth_in, perps_usdc, ETHER // 100, user, recipient),
        route_body(perps_usdc, usdc_out, 10 * USDC, user, recipient, protocolVersion="v2"),
    )
    return (
        *(Seed("evm", body) for body in evm),
        Seed(
            "txs",
            route_body(
                eth_in, eth_out, ETHER // 10, user, recipient, tradeType="EXACT_OUTPUT", txs=[call]
            ),
        ),
        Seed(
            "app fees", route_body(eth_in, eth_out, ETHER // 4, user, recipient, appFees=app_fees)
        ),
        *(Seed("deposit address", body) for body in deposit_addresses),
        *(Seed("svm", body) for body in svm),
        *(Seed("perps", body) for body in perps),
    )
