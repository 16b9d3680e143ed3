"""The devnet SVM node through its JSON-RPC, with transactions signed by solders keypairs."""

from __future__ import annotations

import asyncio
import base64
import time

import orjson
import websockets
from solders.keypair import Keypair
from solders.system_program import ID as SYSTEM_PROGRAM_ID

from crossfill.devnet.svm import accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SOL_PER_HOLDER, USDC_PER_HOLDER, SeededSvm
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.deposits import read_vault_deposits
from tests.support.wallets.svm import encoded, rpc, rpc_reply, signed

BASE64 = {"encoding": "base64"}


def _usdc(url: str, owner: Keypair, seeded: SeededSvm) -> int:
    account = programs.token_account(owner.pubkey(), seeded.usdc_mint)
    return int(rpc(url, "getTokenAccountBalance", str(account))["value"]["amount"])


def test_seeded_users_hold_sol_and_usdc(svm_node: SvmNodeProcess, seeded: SeededSvm) -> None:
    url = svm_node.rpc_url
    user = accounts.users()[0]
    assert rpc(url, "getBalance", str(user.pubkey()))["value"] == SOL_PER_HOLDER
    assert _usdc(url, user, seeded) == USDC_PER_HOLDER
    mint = rpc(url, "getAccountInfo", str(seeded.usdc_mint), {"encoding": "jsonParsed"})
    assert mint["value"]["data"]["parsed"]["info"]["decimals"] == 6
    listed = rpc(
        url, "getTokenAccountsByOwner", str(user.pubkey()), {"mint": str(seeded.usdc_mint)},
        {"encoding": "jsonParsed"},
    )  # fmt: skip
    assert [a["account"]["data"]["parsed"]["info"]["mint"] for a in listed["value"]] == [
        str(seeded.usdc_mint)
    ]


def test_deposit_with_memo_lands_once_and_is_listed(
    svm_node: SvmNodeProcess, seeded: SeededSvm
) -> None:
    url = svm_node.rpc_url
    user, solver = accounts.users()[1], accounts.solver()
    order_id = "0x" + "ab" * 32
    before_usdc, before_sol = (
        _usdc(url, solver, seeded),
        rpc(url, "getBalance", str(solver.pubkey())),
    )
    tx = signed(
        url,
        [
            programs.transfer_token(
                user.pubkey(), solver.pubkey(), seeded.usdc_mint, 25_000_000, 6
            ),
            programs.transfer_sol(user.pubkey(), solver.pubkey(), 10**9),
            programs.memo(order_id),
        ],
        [user],
    )
    assert len(bytes(tx)) <= programs.MAX_TRANSACTION_BYTES
    signature = rpc(url, "sendTransaction", encoded(tx), BASE64)
    assert signature == str(tx.signatures[0])
    # The same signed bytes again: the signature again, and nothing paid twice.
    assert rpc(url, "sendTransaction", encoded(tx), BASE64) == signature
    assert _usdc(url, solver, seeded) == before_usdc + 25_000_000
    assert rpc(url, "getBalance", str(solver.pubkey()))["value"] == before_sol["value"] + 10**9

    status = rpc(url, "getSignatureStatuses", [signature, str(Keypair().pubkey())])["value"]
    assert status[0]["err"] is None and status[1] is None
    landed = rpc(url, "getTransaction", signature, {"encoding": "json"})
    assert landed["meta"]["err"] is None
    assert landed["transaction"]["signatures"] == [signature]
    post = {b["owner"]: b["uiTokenAmount"]["amount"] for b in landed["meta"]["postTokenBalances"]}
    assert post[str(solver.pubkey())] == str(before_usdc + 25_000_000)
    listed = rpc(url, "getSignaturesForAddress", str(solver.pubkey()), {"limit": 5})
    assert listed[0]["signature"] == signature
    assert listed[0]["memo"] == f"[66] {order_id}"


def test_program_failure_is_refused_by_preflight_and_kept_without_it(
    svm_node: SvmNodeProcess, seeded: SeededSvm
) -> None:
    url = svm_node.rpc_url
    poor = Keypair()
    rpc(url, "requestAirdrop", str(poor.pubkey()), 10**7)
    too_much = programs.transfer_sol(poor.pubkey(), accounts.solver().pubkey(), 10**9)
    refused = rpc_reply(url, "sendTransaction", encoded(signed(url, [too_much], [poor])), BASE64)
    assert refused["error"]["code"] == -32002
    assert refused["error"]["data"]["err"] == {"InstructionError": [0, {"Custom": 1}]}

    tx = signed(url, [too_much, programs.memo("x")], [poor])
    signature = rpc(url, "sendTransaction", encoded(tx), {**BASE64, "skipPreflight": True})
    status = rpc(url, "getSignatureStatuses", [signature])["value"][0]
    assert status["err"] == {"InstructionError": [0, {"Custom": 1}]}
    # The fee is paid, the transfer is not.
    assert rpc(url, "getBalance", str(poor.pubkey()))["value"] == 10**7 - 5000


def test_expired_blockhash_is_refused_or_dropped(
    svm_node: SvmNodeProcess, seeded: SeededSvm
) -> None:
    url = svm_node.rpc_url
    user = accounts.users()[2]
    latest = rpc(url, "getLatestBlockhash")["value"]
    pay = programs.transfer_sol(user.pubkey(), accounts.solver().pubkey(), 1)
    tx = signed(url, [pay], [user], blockhash=latest["blockhash"])
    while rpc(url, "getBlockHeight") <= latest["lastValidBlockHeight"]:
        time.sleep(0.1)
    assert rpc(url, "isBlockhashValid", latest["blockhash"])["value"] is False
    refused = rpc_reply(url, "sendTransaction", encoded(tx), BASE64)
    assert refused["error"]["data"]["err"] == "BlockhashNotFound"
    dropped = rpc(url, "sendTransaction", encoded(tx), {**BASE64, "skipPreflight": True})
    time.sleep(0.3)
    assert rpc(url, "getSignatureStatuses", [dropped])["value"] == [None]


def test_fee_rent_and_unknown_method(svm_node: SvmNodeProcess, seeded: SeededSvm) -> None:
    url = svm_node.rpc_url
    user = accounts.users()[3]
    tx = signed(url, [programs.memo("fee")], [user])
    message = base64.b64encode(bytes(tx.message)).decode()
    assert rpc(url, "getFeeForMessage", message)["value"] == 5000
    assert rpc(url, "getMinimumBalanceForRentExemption", 165) > 0
    assert rpc(url, "getSlot") >= 1
    assert rpc_reply(url, "eth_chainId")["error"]["code"] == -32601


async def test_signature_and_slot_subscriptions_fire(
    svm_node: SvmNodeProcess, seeded: SeededSvm
) -> None:
    url = svm_node.rpc_url
    user = accounts.users()[4]
    tx = signed(url, [programs.memo("subscribed")], [user])
    async with websockets.connect(svm_node.ws_url) as socket:
        await socket.send(orjson.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "signatureSubscribe",
             "params": [str(tx.signatures[0]), {"commitment": "confirmed"}]}
        ).decode())  # fmt: skip
        await socket.send(orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "slotSubscribe"}))
        answers = [orjson.loads(await socket.recv()) for _ in range(2)]
        assert {answer["id"] for answer in answers} == {1, 2}
        await asyncio.to_thread(rpc, url, "sendTransaction", encoded(tx), BASE64)
        seen: set[str] = set()
        while "signatureNotification" not in seen or "slotNotification" not in seen:
            message = orjson.loads(await asyncio.wait_for(socket.recv(), 5))
            seen.add(message["method"])
            if message["method"] == "signatureNotification":
                assert message["params"]["result"]["value"] == {"err": None}


def test_what_an_instruction_invoked_is_listed_as_its_inner_instructions(
    svm_node: SvmNodeProcess, seeded: SeededSvm
) -> None:
    """Creating a token account runs the System and Token programs from within the
    associated-token program: a node lists those under the instruction's index."""
    url = svm_node.rpc_url
    user, owner = accounts.users()[2], Keypair().pubkey()
    create = programs.create_token_account(user.pubkey(), owner, seeded.usdc_mint)
    tx = signed(url, [programs.memo("first"), create], [user])
    signature = rpc(url, "sendTransaction", encoded(tx), BASE64)
    landed = rpc(url, "getTransaction", signature, {"encoding": "json"})
    keys = landed["transaction"]["message"]["accountKeys"]
    (group,) = landed["meta"]["innerInstructions"]
    assert group["index"] == 1
    invoked = {keys[ix["programIdIndex"]] for ix in group["instructions"]}
    assert invoked == {str(SYSTEM_PROGRAM_ID), str(programs.TOKEN_PROGRAM_ID)}
    assert all(ix["stackHeight"] == 2 for ix in group["instructions"])
    # Nothing paid into the vault: no deposit, though inner instructions are read.
    assert read_vault_deposits(landed, str(accounts.solver().pubkey())) == []
