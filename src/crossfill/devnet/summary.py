"""What `crossfill devnet` prints once everything is up: each chain's contracts (those the
service uses, and those published for clients: the gasless delegate, the attestation verifier,
the deposit-address factory), the gas sponsor and a funded test account."""

from __future__ import annotations

import base58
from rich.console import Console
from web3 import Web3

from crossfill.config import Deployment
from crossfill.config.secrets import devnet_account
from crossfill.devnet import accounts
from crossfill.devnet.peer import PeerService
from crossfill.devnet.seed import USER_FUNDING
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.perps.config import perps_exchange
from crossfill.kinds.svm.config import SvmChainConfig, svm_chains
from crossfill.settings import Settings


def print_summary(
    console: Console, settings: Settings, deployment: Deployment, *, chains_only: bool
) -> None:
    if not chains_only:
        console.print(f"[bold]Crossfill API[/bold]  http://{settings.host}:{settings.port}")
    console.print(f"deployment file  {settings.deployment_path}")
    console.print(f"database         {settings.database}")
    for chain in evm_chains(deployment):
        console.print(
            f"[bold]chain {chain.id}[/bold] {chain.display_name}  rpc {chain.http_rpc_url}"
        )
        for currency in chain.erc20_currencies:
            console.print(f"  {currency.symbol:<24} {currency.address}")
        for role, address in chain.contracts.model_dump(exclude_none=True).items():
            console.print(f"  {role:<24} {address}")
    for svm_chain in svm_chains(deployment):
        _print_svm_chain(console, svm_chain)
    exchange = perps_exchange(deployment)
    if exchange is not None:
        console.print(
            f"[bold]chain {exchange.id}[/bold] {exchange.display_name} "
            f"(perps exchange)  api {exchange.api_url}\n"
            f"  {'solver account':<24} {exchange.solver.address}\n"
            "  fund an account: crossfill devnet fund-exchange --user 0x... --usd 100"
        )
    for sponsor in deployment.gasless.sponsors:
        console.print(
            f"gas sponsor      {sponsor.address}  (POST /execute; docs/gasless.md)\n"
            "  give a key it   crossfill keys sponsor KEY --wallet ADDRESS --chain ID "
            "--currency USDC"
        )
    user = accounts.users()[0]
    console.print(
        f"test account     {user.address}\n"
        f"  private key    {Web3.to_hex(user.key)}  (anvil's public test mnemonic: devnet only)\n"
        f"  holds          {USER_FUNDING.native // 10**18} ETH, "
        f"{USER_FUNDING.usdc // 10**6} USDC, {USER_FUNDING.weth // 10**18} WETH on every chain"
    )
    console.print("Ctrl-C stops the service and every chain.")


def print_peer(console: Console, peer: PeerService) -> None:
    """The peer deployment: its API (the bridge a rebalancer may use), its solver, its files."""
    console.print(
        f"[bold]Peer Crossfill API[/bold]  {peer.base_url}  (a second, independent deployment)\n"
        f"  {'solver':<24} {devnet_account(accounts.PEER_ROLES.solver).address}\n"
        f"  {'deployment file':<24} {peer.home / 'deployment.toml'}\n"
        f"  {'log':<24} {peer.log_path}"
    )


def _print_svm_chain(console: Console, chain: SvmChainConfig) -> None:
    user = svm_accounts.users()[0]
    console.print(
        f"[bold]chain {chain.id}[/bold] {chain.display_name} (svm)  rpc {chain.http_rpc_url}  "
        f"ws {chain.ws_rpc_url}"
    )
    for currency in chain.currencies:
        console.print(f"  {currency.symbol:<24} {currency.address}")
    console.print(f"  {'solver vault':<24} {chain.solver.address}")
    console.print(
        f"  test account   {user.pubkey()}\n"
        f"  secret key     {base58.b58encode(bytes(user)).decode()}  (a public seed: devnet only)"
    )
