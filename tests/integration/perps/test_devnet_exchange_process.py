"""The devnet exchange as `crossfill devnet` runs it: its own process, funded by the CLI's
`fund-exchange`, read by the service's exchange client; its state survives a restart."""

from __future__ import annotations

import subprocess
import time
from decimal import Decimal
from pathlib import Path

import pytest
from eth_account import Account

from crossfill.devnet import accounts
from crossfill.devnet.deployment_file import write_deployment
from crossfill.devnet.exchange.deployment import perps_document, seed_exchange
from crossfill.devnet.exchange.process import start_exchange
from crossfill.errors import ActionRefused, ChainUnreachable
from crossfill.kinds.perps.actions import UsdSend, sign_action
from crossfill.kinds.perps.client import PerpsClient, Transfer
from crossfill.types import ChainId
from tests.support.service import run_cli
from tests.unit.deployment_samples import deployment_document


def _fund_with_cli(home: Path, user: str, *options: str) -> subprocess.CompletedProcess[str]:
    return run_cli("devnet", "fund-exchange", "--user", user, *options, home=home)


async def test_funded_by_the_cli_paid_by_the_client_and_kept_across_a_restart(
    tmp_path: Path,
) -> None:
    state = tmp_path / "exchange-state.sqlite3"
    process = start_exchange(state_path=state, log_dir=tmp_path)
    try:
        seed_exchange(process.api_url)
        document = {**deployment_document(1), "perps": perps_document(api_url=process.api_url)}
        write_deployment(tmp_path / "deployment.toml", document)
        user = Account.create()
        funded = _fund_with_cli(tmp_path, user.address, "--usd", "100")
        assert funded.returncode == 0, funded.stderr
        assert "credited 100 USD" in funded.stdout
        spot = _fund_with_cli(tmp_path, user.address, "--token", "HYPE", "--amount", "2.5")
        assert spot.returncode == 0, spot.stderr
        refused = _fund_with_cli(tmp_path, user.address, "--usd", "1", "--token", "HYPE")
        assert refused.returncode != 0

        client = PerpsClient(ChainId(1337), process.api_url)
        recipient = Account.create().address
        nonce = int(time.time() * 1000)
        signed = sign_action(UsdSend("Testnet", 0x66EEE, recipient, "40", time=nonce), user)
        await client.post_action(signed)
        with pytest.raises(ActionRefused, match="duplicate nonce"):
            await client.post_action(signed)
        assert (await client.clearinghouse_state(user.address)).withdrawable == Decimal(60)
        assert [b.total for b in await client.spot_balances(user.address)] == [Decimal("2.5")]
        solver = await client.clearinghouse_state(accounts.solver().address)
        assert solver.withdrawable == Decimal(1_000_000)
        (update,) = await client.ledger_updates(recipient, start_ms=0)
        assert isinstance(update.delta, Transfer) and update.delta.nonce == nonce
    finally:
        process.stop()
    with pytest.raises(ChainUnreachable):
        await client.clearinghouse_state(user.address)
    restarted = start_exchange(state_path=state, log_dir=tmp_path)
    try:
        client = PerpsClient(ChainId(1337), restarted.api_url)
        assert (await client.clearinghouse_state(recipient)).withdrawable == Decimal(40)
        with pytest.raises(ActionRefused, match="duplicate nonce"):
            await client.post_action(signed)
        seed_exchange(restarted.api_url)  # seeds once per state file
        solver = await client.clearinghouse_state(accounts.solver().address)
        assert solver.withdrawable == Decimal(1_000_000)
        await client.close()
    finally:
        restarted.stop()
