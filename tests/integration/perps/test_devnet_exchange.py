"""The devnet exchange takes transfers signed by the exchange's own Python SDK and by
eth-account (our signing module), and refuses each bad one with the real exchange's shape:
HTTP 200 `{"status": "err", "response": <message>}`; the ledger never goes negative."""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount

from crossfill.kinds.perps import nonces as exchange_nonces
from crossfill.kinds.perps.actions import UsdSend, sign_action
from crossfill.kinds.perps.nonces import FUTURE_WINDOW_MS, PAST_WINDOW_MS
from tests.integration.perps.conftest import NOW_MS, DevnetExchange
from tests.support.wallets.perps import sdk_send_asset, sdk_spot_send, sdk_usd_send

OK = {"status": "ok", "response": {"type": "default"}}


@pytest.fixture
def alice(exchange: DevnetExchange) -> LocalAccount:
    wallet: LocalAccount = Account.create()
    exchange.fund_usd(wallet.address, 100)
    return wallet


def _refused(answer: dict[str, Any], message: str) -> None:
    assert answer["status"] == "err", answer
    assert message in answer["response"], answer


def test_a_usd_send_signed_by_the_sdk_moves_perps_usdc(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    bob = Account.create().address
    assert exchange.post(sdk_usd_send(alice, bob, "12.5", NOW_MS)) == OK
    assert exchange.withdrawable(alice.address) == "87.5"
    assert exchange.withdrawable(bob) == "12.5"
    state = exchange.info(type="clearinghouseState", user=bob)
    assert state["marginSummary"]["accountValue"] == "12.5"
    (entry,) = exchange.info(type="userNonFundingLedgerUpdates", user=bob, startTime=0)
    assert entry["time"] == NOW_MS and entry["hash"].startswith("0x") and len(entry["hash"]) == 66
    assert entry["delta"] == {
        "type": "internalTransfer", "usdc": "12.5", "user": alice.address.lower(),
        "destination": bob.lower(), "fee": "0.0", "nonce": NOW_MS,
    }  # fmt: skip
    assert exchange.info(type="userNonFundingLedgerUpdates", user=alice.address,
                         startTime=0) == [entry]  # fmt: skip


def test_a_usd_send_signed_with_eth_account_is_taken_too(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    bob = Account.create().address
    signed = sign_action(UsdSend("Testnet", 0xA4B1, bob, "5", time=NOW_MS), alice)
    assert exchange.post(signed.request_body()) == OK
    assert exchange.withdrawable(bob) == "5.0"


def test_send_asset_and_spot_send_move_between_dexes_and_accounts(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    bob = Account.create().address
    to_spot = sdk_send_asset(alice, alice.address, "40", NOW_MS, destination_dex="spot")
    assert exchange.post(to_spot) == OK
    spot_send = sdk_spot_send(alice, bob, "15.5", "USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
                              NOW_MS + 1)  # fmt: skip
    assert exchange.post(spot_send) == OK
    assert exchange.withdrawable(alice.address) == "60.0"
    spot = exchange.info(type="spotClearinghouseState", user=bob)["balances"]
    assert spot == [{"coin": "USDC", "token": 0, "hold": "0.0", "total": "15.5",
                     "entryNtl": "0.0"}]  # fmt: skip
    kinds = [
        u["delta"]["type"]
        for u in exchange.info(type="userNonFundingLedgerUpdates", user=alice.address, startTime=0)
    ]
    assert kinds == ["send", "spotTransfer"]


def test_spot_meta_lists_the_tokens_by_id(exchange: DevnetExchange) -> None:
    tokens = exchange.info(type="spotMeta")["tokens"]
    assert tokens[0]["name"] == "USDC"
    assert tokens[0]["tokenId"] == "0x6d1e7cde53ba9467b783cb7c530ce054"
    assert {"index", "szDecimals", "weiDecimals"} <= set(tokens[0])


@pytest.mark.parametrize("nonce", [NOW_MS - PAST_WINDOW_MS, NOW_MS + FUTURE_WINDOW_MS, 12345])
def test_a_nonce_outside_the_window_is_refused(
    exchange: DevnetExchange, alice: LocalAccount, nonce: int
) -> None:
    answer = exchange.post(sdk_usd_send(alice, Account.create().address, "1", nonce))
    _refused(answer, exchange_nonces.OUTSIDE_WINDOW)
    assert exchange.withdrawable(alice.address) == "100.0"


def test_a_replayed_action_is_refused_and_credits_once(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    bob = Account.create().address
    body = sdk_usd_send(alice, bob, "10", NOW_MS)
    assert exchange.post(body) == OK
    _refused(exchange.post(body), "Invalid nonce: duplicate nonce")
    # The same nonce on another action of the same signer is refused as well.
    _refused(exchange.post(sdk_usd_send(alice, bob, "1", NOW_MS)), "duplicate nonce")
    assert exchange.withdrawable(bob) == "10.0"


def test_the_same_nonce_is_free_for_another_signer(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    carol: LocalAccount = Account.create()
    exchange.fund_usd(carol.address, 5)
    assert exchange.post(sdk_usd_send(alice, carol.address, "1", NOW_MS)) == OK
    assert exchange.post(sdk_usd_send(carol, alice.address, "1", NOW_MS)) == OK


def test_a_nonce_that_differs_from_the_signed_one_is_refused(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    body = {**sdk_usd_send(alice, Account.create().address, "1", NOW_MS), "nonce": NOW_MS + 1}
    _refused(exchange.post(body), "nonce differs from the signed action's")


def test_an_unsigned_action_is_refused(exchange: DevnetExchange, alice: LocalAccount) -> None:
    body = sdk_usd_send(alice, Account.create().address, "1", NOW_MS)
    del body["signature"]
    _refused(exchange.post(body), "Missing signature")


@pytest.mark.parametrize(
    "mangle",
    [
        lambda body: body["action"].update(type="withdraw3"),
        lambda body: body["action"].pop("destination"),
        lambda body: body["action"].update(amount="-1"),
        lambda body: body["signature"].update(r="0x12"),
        lambda body: body.update(action="usdSend"),
    ],
)
def test_a_malformed_action_is_refused_with_its_reason(
    exchange: DevnetExchange, alice: LocalAccount, mangle: Any
) -> None:
    body = sdk_usd_send(alice, Account.create().address, "1", NOW_MS)
    mangle(body)
    answer = exchange.post(body)
    assert answer["status"] == "err" and answer["response"], answer
    assert exchange.withdrawable(alice.address) == "100.0"


def test_an_unreadable_body_is_a_422(exchange: DevnetExchange) -> None:
    reply = exchange.http.post("/exchange", content=b"{not json")
    assert reply.status_code == 422


def test_a_signature_by_another_wallet_moves_nothing(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    """The signer is the account debited: a wallet without an account is refused, and a
    changed action recovers some other address, refused the same way."""
    mallory: LocalAccount = Account.create()
    bob = Account.create().address
    _refused(exchange.post(sdk_usd_send(mallory, bob, "1", NOW_MS)),
             f"User or API Wallet {mallory.address.lower()} does not exist")  # fmt: skip
    tampered = sdk_usd_send(alice, bob, "1", NOW_MS)
    tampered["action"]["amount"] = "99"
    _refused(exchange.post(tampered), "does not exist")
    assert exchange.withdrawable(alice.address) == "100.0"
    assert exchange.withdrawable(bob) == "0.0"


def test_an_action_signed_for_the_other_network_is_refused(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    signed = sign_action(UsdSend("Mainnet", 0xA4B1, alice.address, "1", time=NOW_MS), alice)
    _refused(exchange.post(signed.request_body()), "This exchange is Testnet")


def test_insufficient_balance_is_refused_and_nothing_moves(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    bob = Account.create().address
    _refused(exchange.post(sdk_usd_send(alice, bob, "100.000001", NOW_MS)),
             "Insufficient balance")  # fmt: skip
    _refused(exchange.post(sdk_spot_send(alice, bob, "1", "HYPE:0x0d01dc56dcaaca66ad901c959b4011ec",
                                         NOW_MS + 1)), "Insufficient balance")  # fmt: skip
    assert exchange.withdrawable(alice.address) == "100.0"
    # A refused action does not use its nonce up: the same nonce is taken afterwards.
    assert exchange.post(sdk_usd_send(alice, bob, "100", NOW_MS)) == OK
    assert exchange.withdrawable(alice.address) == "0.0"


def test_amounts_finer_than_perps_usd_are_refused(
    exchange: DevnetExchange, alice: LocalAccount
) -> None:
    answer = exchange.post(sdk_usd_send(alice, Account.create().address, "0.0000001", NOW_MS))
    _refused(answer, "more than 6 decimals")


def test_the_state_outlives_the_process(exchange: DevnetExchange, alice: LocalAccount) -> None:
    from crossfill.devnet.exchange.ledger import ExchangeLedger

    bob = Account.create().address
    assert exchange.post(sdk_usd_send(alice, bob, "3", NOW_MS)) == OK
    reopened = ExchangeLedger(exchange.state_path)
    try:
        assert reopened.balance(bob, "", "USDC") == 3 * 10**8
        assert reopened.entries(bob, start_ms=0, end_ms=None)[0].delta["nonce"] == NOW_MS
    finally:
        reopened.close()
