"""Fund the solver and test users and seed the WETH/USDC pool on one devnet chain."""

from __future__ import annotations

from dataclasses import dataclass

from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import DeployedContracts, contract_at, send, signing_web3
from crossfill.types import Address

ETHER = 10**18
USDC_UNIT = 10**6
MAX_UINT256 = 2**256 - 1


@dataclass(frozen=True)
class Funding:
    """What each funded account holds after seeding (smallest units)."""

    native: int
    usdc: int
    weth: int


SOLVER_FUNDING = Funding(native=10_000 * ETHER, usdc=10_000_000 * USDC_UNIT, weth=1_000 * ETHER)
USER_FUNDING = Funding(native=1_000 * ETHER, usdc=100_000 * USDC_UNIT, weth=10 * ETHER)
GAS_SPONSOR_NATIVE = 100 * ETHER
DEVNET_ETH_USD = 3_000
POOL_WETH = 1_000 * ETHER
POOL_USDC = POOL_WETH // ETHER * DEVNET_ETH_USD * USDC_UNIT


def _fund(
    rpc_url: str,
    deployer: Web3,
    contracts: DeployedContracts,
    account: LocalAccount,
    funding: Funding,
) -> None:
    usdc = contract_at(deployer, "TestUSDC", contracts.usdc)
    send(deployer, usdc.functions.mint(account.address, funding.usdc))
    # The native balance is set directly; the account then wraps its WETH share itself.
    set_native_balance(rpc_url, account.address, funding.native + funding.weth)
    holder = signing_web3(rpc_url, account)
    send(
        holder, contract_at(holder, "WETH", contracts.weth).functions.deposit(), value=funding.weth
    )


def _approve_filler(rpc_url: str, solver: LocalAccount, contracts: DeployedContracts) -> None:
    """The Filler pulls token payments from the solver's own inventory."""
    web3 = signing_web3(rpc_url, solver)
    for name, token in (("TestUSDC", contracts.usdc), ("WETH", contracts.weth)):
        send(web3, contract_at(web3, name, token).functions.approve(contracts.filler, MAX_UINT256))


def _seed_pool(deployer: Web3, contracts: DeployedContracts, owner: Address) -> None:
    usdc = contract_at(deployer, "TestUSDC", contracts.usdc)
    weth = contract_at(deployer, "WETH", contracts.weth)
    router = contract_at(deployer, "UniswapV2Router02", contracts.uniswap_v2_router)
    send(deployer, usdc.functions.mint(owner, POOL_USDC))
    send(deployer, weth.functions.deposit(), value=POOL_WETH)
    send(deployer, usdc.functions.approve(contracts.uniswap_v2_router, POOL_USDC))
    send(deployer, weth.functions.approve(contracts.uniswap_v2_router, POOL_WETH))
    deadline = deployer.eth.get_block("latest")["timestamp"] + 3600
    send(
        deployer,
        router.functions.addLiquidity(
            contracts.weth,
            contracts.usdc,
            POOL_WETH,
            POOL_USDC,
            POOL_WETH,
            POOL_USDC,
            owner,
            deadline,
        ),
    )


def seed_chain(
    rpc_url: str,
    contracts: DeployedContracts,
    *,
    deployer: LocalAccount,
    solver: LocalAccount,
    users: list[LocalAccount],
    gas_sponsor: LocalAccount | None = None,
) -> None:
    deployer_web3 = signing_web3(rpc_url, deployer)
    set_native_balance(rpc_url, deployer.address, 100_000 * ETHER)
    if gas_sponsor is not None:
        set_native_balance(rpc_url, gas_sponsor.address, GAS_SPONSOR_NATIVE)
    _seed_pool(deployer_web3, contracts, Address(deployer.address))
    seed_solver(rpc_url, contracts, deployer=deployer, solver=solver)
    for user in users:
        _fund(rpc_url, deployer_web3, contracts, user, USER_FUNDING)


def seed_solver(
    rpc_url: str,
    contracts: DeployedContracts,
    *,
    deployer: LocalAccount,
    solver: LocalAccount,
    funding: Funding = SOLVER_FUNDING,
) -> None:
    """A deployment's solver funded with `funding` (the deployer mints its USDC), its
    Filler allowed to pull its tokens."""
    _fund(rpc_url, signing_web3(rpc_url, deployer), contracts, solver, funding)
    _approve_filler(rpc_url, solver, contracts)
