"""Deploy our contracts and Uniswap V2 on one chain, signing locally as the deployer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.middleware import SignAndSendRawMiddlewareBuilder

from crossfill.contracts import load_artifact
from crossfill.errors import DevnetError
from crossfill.types import Address

# Seconds a solver's requested bond withdrawal waits before it may leave (devnet: ten minutes).
SOLVER_BOND_WITHDRAWAL_DELAY = 600


@dataclass(frozen=True)
class DeployedContracts:
    depository: Address
    filler: Address
    receiver: Address
    router: Address
    approval_proxy: Address
    multicaller: Address
    only_owner_multicaller: Address
    usdc: Address
    weth: Address
    uniswap_v2_factory: Address
    uniswap_v2_router: Address
    weth_usdc_pair: Address
    deposit_address_factory: Address
    gasless_delegate: Address
    attestation_verifier: Address
    erc7683_origin_settler: Address
    erc7683_destination_settler: Address
    solver_bond: Address


def signing_web3(rpc_url: str, account: LocalAccount) -> Web3:
    """A Web3 whose `transact` calls from `account` are signed locally and sent raw."""
    web3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 30}))
    web3.middleware_onion.inject(SignAndSendRawMiddlewareBuilder.build(account), layer=0)
    web3.eth.default_account = account.address
    return web3


def contract_at(web3: Web3, name: str, address: str) -> Contract:
    return web3.eth.contract(address=Web3.to_checksum_address(address), abi=load_artifact(name).abi)


def send(web3: Web3, call: Any, **tx: Any) -> dict[str, Any]:
    """Send a contract call as a transaction and require success."""
    tx_hash = call.transact(tx)
    receipt = dict(web3.eth.wait_for_transaction_receipt(tx_hash, timeout=60))
    if receipt["status"] != 1:
        raise DevnetError(f"transaction {tx_hash.to_0x_hex()} reverted")
    return receipt


def deploy(web3: Web3, name: str, *args: Any) -> Address:
    artifact = load_artifact(name)
    factory = web3.eth.contract(abi=artifact.abi, bytecode=artifact.bytecode)
    receipt = send(web3, factory.constructor(*args))
    address = receipt.get("contractAddress")
    if not address:
        raise DevnetError(f"{name} deployment produced no contract")
    return Address(Web3.to_checksum_address(address))


@dataclass(frozen=True)
class ChainAssets:
    """What every deployment on a devnet chain shares: the tokens and the Uniswap V2 pool."""

    usdc: Address
    weth: Address
    uniswap_v2_factory: Address
    uniswap_v2_router: Address
    weth_usdc_pair: Address


def deploy_assets(web3: Web3, *, owner: Address) -> ChainAssets:
    usdc = deploy(web3, "TestUSDC", owner)
    weth = deploy(web3, "WETH")
    factory = deploy(web3, "UniswapV2Factory", owner)
    uniswap_router = deploy(web3, "UniswapV2Router02", factory, weth)
    send(web3, contract_at(web3, "UniswapV2Factory", factory).functions.createPair(weth, usdc))
    pair = contract_at(web3, "UniswapV2Factory", factory).functions.getPair(weth, usdc).call()
    return ChainAssets(
        usdc=usdc,
        weth=weth,
        uniswap_v2_factory=factory,
        uniswap_v2_router=uniswap_router,
        weth_usdc_pair=Address(Web3.to_checksum_address(pair)),
    )


def deploy_service(
    web3: Web3,
    assets: ChainAssets,
    *,
    owner: Address,
    solver: Address,
    allocator: Address,
    router: Address | None = None,
) -> DeployedContracts:
    """One deployment's own contracts (its Depository, Filler, ...) beside the chain's shared
    `assets`: a chain may carry several, each with its own solver and allocator. `router`:
    one deployed already (else deployed here)."""
    router = router or deploy(web3, "Router")
    depository = deploy(web3, "Depository", owner, allocator)
    return DeployedContracts(
        depository=depository,
        filler=deploy(web3, "Filler", owner, solver, router),
        receiver=deploy(web3, "Receiver", solver),
        router=router,
        approval_proxy=deploy(web3, "ApprovalProxy", owner, router),
        multicaller=deploy(web3, "Multicaller"),
        only_owner_multicaller=deploy(web3, "OnlyOwnerMulticaller", solver),
        usdc=assets.usdc,
        weth=assets.weth,
        uniswap_v2_factory=assets.uniswap_v2_factory,
        uniswap_v2_router=assets.uniswap_v2_router,
        weth_usdc_pair=assets.weth_usdc_pair,
        # Deposit addresses: the solver sweeps them into the Depository.
        deposit_address_factory=deploy(web3, "DepositAddressFactory", solver, depository),
        # For clients: the delegate a gasless user's code points at, and an attestation check.
        gasless_delegate=deploy(web3, "BatchDelegate"),
        attestation_verifier=deploy(web3, "AttestationVerifier"),
        # ERC-7683: orders opened here are deposits into this Depository; fills are paid there.
        erc7683_origin_settler=deploy(web3, "CrossfillOriginSettler", depository),
        erc7683_destination_settler=deploy(web3, "CrossfillDestinationSettler"),
        # External solvers' bonds, debited by the allocator (docs/solvers.md).
        solver_bond=deploy(web3, "SolverBond", allocator, SOLVER_BOND_WITHDRAWAL_DELAY),
    )


def deploy_all(
    web3: Web3, *, owner: Address, solver: Address, allocator: Address
) -> DeployedContracts:
    """The chain's shared assets, then a deployment's contracts on them (the Router first:
    every address stays where the devnet has always put it)."""
    router = deploy(web3, "Router")
    assets = deploy_assets(web3, owner=owner)
    return deploy_service(
        web3, assets, owner=owner, solver=solver, allocator=allocator, router=router
    )
