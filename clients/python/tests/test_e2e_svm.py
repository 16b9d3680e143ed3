"""The client alone, on asyncio, bridging between an EVM chain and the SVM chain both ways:
the EVM deposit signed with eth-account, the SVM deposit compiled from the quote's
instructions and signed with solders; each followed to success and its output found on the
destination chain."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from eth_account import Account
from solders.keypair import Keypair

from client_devnet import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    SOL,
    SVM_CHAIN,
    bridge,
    evm_balance,
    funded_user,
    rpc_url,
    sol_balance,
)
from crossfill.config import Deployment
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill_client import AsyncClient, RequestStatus, Signer
from crossfill_client.models import SvmTransactionData
from crossfill_client.signing import EvmWallet, SvmWallet
from tests.support.devnets import RunningDevnet, with_svm_chain
from tests.support.service import ServiceThread


@pytest.fixture(scope="module")
def deployment(devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm]) -> Deployment:
    return with_svm_chain(devnet.deployment, *svm_node)


@pytest.fixture
async def client(service: ServiceThread) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(service.base_url) as client:
        yield client


@pytest.fixture(scope="module")
def rpc_urls(devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm]) -> dict[int, str]:
    node, _seeded = svm_node
    return {ORIGIN: rpc_url(devnet, ORIGIN), DESTINATION: rpc_url(devnet, DESTINATION),
            SVM_CHAIN: node.rpc_url}  # fmt: skip


async def test_eth_to_sol_pays_the_svm_recipient(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    client: AsyncClient,
    rpc_urls: dict[int, str],
) -> None:
    node, _seeded = svm_node
    user, recipient = funded_user(devnet), str(Keypair().pubkey())
    quote = await client.quote(
        bridge(user.address, (ORIGIN, SVM_CHAIN), (NATIVE, SOL), 10**17, recipient=recipient)
    )

    result = await client.execute(quote, Signer(evm=EvmWallet(user)), rpc_urls=rpc_urls)

    assert result.status is not None and result.status.status is RequestStatus.SUCCESS
    assert sol_balance(node.rpc_url, recipient) == quote.details.currency_out.amount > 0


async def test_sol_to_eth_signs_the_quoted_svm_transaction(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    client: AsyncClient,
    rpc_urls: dict[int, str],
) -> None:
    node, _seeded = svm_node
    user, recipient = svm_accounts.users()[0], Account.create().address
    vault = str(svm_accounts.solver().pubkey())
    vault_before = sol_balance(node.rpc_url, vault)
    route, currencies = (SVM_CHAIN, DESTINATION), (SOL, NATIVE)
    quote = await client.quote(
        bridge(str(user.pubkey()), route, currencies, 2 * 10**9, recipient=recipient)
    )
    assert isinstance(quote.steps[0].items[0].data, SvmTransactionData)

    result = await client.execute(quote, Signer(svm=SvmWallet(user)), rpc_urls=rpc_urls)

    assert result.status is not None and result.status.status is RequestStatus.SUCCESS
    (deposit,) = result.transactions
    assert deposit.chain_id == SVM_CHAIN and result.status.in_tx_hashes == (deposit.tx_id,)
    assert evm_balance(devnet, DESTINATION, NATIVE, recipient) == quote.details.currency_out.amount
    assert sol_balance(node.rpc_url, vault) == vault_before + 2 * 10**9
