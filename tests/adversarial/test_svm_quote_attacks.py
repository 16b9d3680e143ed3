"""Quotes that pay out off the EVM chains, asked for more than can be paid: an amount no chain
can move, and an output larger than the paying side holds. Each is refused at quote time, as
EVM routes refuse it, so no deposit is ever taken for a fill that cannot happen."""

from __future__ import annotations

from typing import Any

import httpx
from eth_account import Account

from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.evm.config import evm_chain
from tests.adversarial.cross_vm import PERPS_ID, PERPS_USDC, SOL, SVM_ID, quoted
from tests.adversarial.quote_seeds import route_body
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, usdc
from tests.e2e.conftest import validate_against
from tests.support.wallets.svm import sol_balance

HUGE = 2**100
EVM_USER = Account.create().address


def _to_svm(amount: int) -> dict[str, Any]:
    recipient = str(svm_accounts.users()[0].pubkey())
    return route_body((ORIGIN, NATIVE), (SVM_ID, SOL), amount, EVM_USER, recipient)


def _from_svm(amount: int) -> dict[str, Any]:
    user = str(svm_accounts.users()[1].pubkey())
    return route_body((SVM_ID, SOL), (DESTINATION, NATIVE), amount, user, EVM_USER)


def _refused(client: httpx.Client, body: dict[str, Any], code: str) -> dict[str, Any]:
    answer = client.post("/quote/v2", json=body)
    assert answer.status_code == 400, (answer.status_code, answer.text)
    error: dict[str, Any] = answer.json()
    validate_against("quote-error", error)
    assert error["errorCode"] == code, error
    return error


def _scaled_past(client: httpx.Client, body: dict[str, Any], held: int) -> int:
    """An amount whose quoted output is above `held`, found from a small quote's rate."""
    small = int(body["amount"])
    out = int(quoted(client, body)["details"]["currencyOut"]["amount"])  # type: ignore[index]
    return small * (held * 5 // 4) // out + 1


def test_an_amount_of_2_to_the_100_to_the_svm_chain_is_a_400(cross_vm: httpx.Client) -> None:
    quoted(cross_vm, _to_svm(10**16))  # the service is ready
    _refused(cross_vm, _to_svm(HUGE), "INSUFFICIENT_LIQUIDITY")
    # The connection stayed open and the service still quotes.
    assert cross_vm.post("/quote/v2", json=_to_svm(10**16)).status_code == 200


def test_an_amount_of_2_to_the_100_from_the_svm_chain_is_a_400(cross_vm: httpx.Client) -> None:
    quoted(cross_vm, _from_svm(10**9))
    error = _refused(cross_vm, _from_svm(HUGE), "INVALID_INPUT")
    assert "2**64" in error["message"]
    assert cross_vm.post("/quote/v2", json=_from_svm(10**9)).status_code == 200


def test_an_output_above_the_svm_vault_is_insufficient_liquidity(
    svm_node: tuple[SvmNodeProcess, SeededSvm], cross_vm: httpx.Client
) -> None:
    node, _seeded = svm_node
    vault = sol_balance(node.rpc_url, svm_accounts.solver().pubkey())
    body = _to_svm(10**17)
    too_much = _scaled_past(cross_vm, body, vault)
    error = _refused(cross_vm, {**body, "amount": str(too_much)}, "INSUFFICIENT_LIQUIDITY")
    assert "SOL" in error["message"]


def test_an_output_above_the_evm_solver_from_the_svm_chain_is_insufficient_liquidity(
    devnet: RunningDevnet, cross_vm: httpx.Client
) -> None:
    web3_balance = _evm_balance(devnet, DESTINATION, devnet.deployment.solver.address)
    body = _from_svm(10**9)
    too_much = _scaled_past(cross_vm, body, web3_balance)
    assert too_much < 2**64  # an SVM transfer carries it: only the solver's balance is short
    _refused(cross_vm, {**body, "amount": str(too_much)}, "INSUFFICIENT_LIQUIDITY")


def test_an_amount_of_2_to_the_100_to_the_perps_exchange_is_a_400(
    devnet: RunningDevnet, cross_vm: httpx.Client
) -> None:
    body = route_body(
        (ORIGIN, usdc(devnet, ORIGIN)), (PERPS_ID, PERPS_USDC), 10**7, EVM_USER, EVM_USER
    )
    quoted(cross_vm, body)
    _refused(cross_vm, {**body, "amount": str(HUGE)}, "INSUFFICIENT_LIQUIDITY")


def test_an_output_above_the_solvers_exchange_account_is_insufficient_liquidity(
    devnet: RunningDevnet, cross_vm: httpx.Client
) -> None:
    # The devnet exchange holds 1,000,000 perps USD for the solver: ask for 1,300,000.
    body = route_body(
        (ORIGIN, usdc(devnet, ORIGIN)),
        (PERPS_ID, PERPS_USDC),
        1_300_000 * 10**6,
        EVM_USER,
        EVM_USER,
    )
    error = _refused(cross_vm, body, "INSUFFICIENT_LIQUIDITY")
    assert str(PERPS_ID) in error["message"]


def _evm_balance(devnet: RunningDevnet, chain_id: int, address: str) -> int:
    chain = evm_chain(devnet.deployment, chain_id)
    assert chain is not None
    reply = httpx.post(
        chain.rpc_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance", "params": [address, "latest"]},
    ).json()
    return int(reply["result"], 16)
