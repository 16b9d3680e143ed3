"""`IntentsApiBridge`'s outcomes, the bridge an `httpx.MockTransport` and the origin the
in-memory chain port under a real transaction manager: a refusal the bridge states is final;
its 5xx, 429 and lost connections, and the chain's failures, are retried and then
`Unavailable`; a quote the solver cannot carry out alone is refused; each status record (and
each state of our own transactions) is its typed status; `send` resumes, never signs twice."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from crossfill.config import RebalancingSettings
from crossfill.errors import ChainUnreachable
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store.tables import SentTransaction
from crossfill.treasury.bridge import (
    Arrived,
    BridgeQuote,
    Failed,
    Move,
    Pending,
    Refunded,
    Refused,
    SentMove,
    Unavailable,
)
from crossfill.treasury.intents_api_bridge import IntentsApiBridge, client_retry, step_purpose
from crossfill_client import AsyncClient
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import ChainWorld, chain_world

# A quote the devnet service answered (USDC: an approval, then the deposit).
RECORDED = Path(__file__).parents[2] / "clients/python/tests/recorded/quote_evm_usdc.json"
SETTINGS = RebalancingSettings(bridge_url="http://bridge.test", bridge_attempts=3)
Handler = Callable[[httpx.Request], httpx.Response]


def recorded_quote(solver: str, chain_id: int) -> dict[str, Any]:
    """The recorded quote, made out to `solver` on `chain_id`."""
    document: dict[str, Any] = json.loads(RECORDED.read_text())
    document["details"]["recipient"] = solver.lower()
    for step in document["steps"]:
        for item in step["items"]:
            item["data"]["from"] = solver.lower()
            item["data"]["chainId"] = chain_id
    return document


def status_record(status: str, chain_id: int, **fields: Any) -> dict[str, Any]:
    return {
        "status": status,
        "inTxHashes": [],
        "txHashes": ["0x" + "ab" * 32] if status == "success" else [],
        "updatedAt": 1,
        "originChainId": chain_id,
        "destinationChainId": chain_id + 1,
        **fields,
    }


@dataclass
class World:
    base: ChainWorld
    txmanager: TxManager
    requests: list[httpx.Request]
    answers: list[httpx.Response | Handler]

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    @property
    def solver(self) -> str:
        return self.txmanager.account.address

    @property
    def move(self) -> Move:
        token = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
        return Move(self.base.config.id, self.base.config.id + 1, token, token, 10**6)

    def answer(self, *answers: httpx.Response | Handler) -> None:
        """The bridge's answers from now on, in order (the last one repeated)."""
        self.answers[:] = answers

    def bridge(self) -> IntentsApiBridge:
        def handle(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
            return answer if isinstance(answer, httpx.Response) else answer(request)

        async def mine_while_waiting(_seconds: float) -> None:
            self.chain.mine_block()

        client = AsyncClient(
            "http://bridge.test",
            transport=httpx.MockTransport(handle),
            retry=client_retry(SETTINGS),
            sleep=mine_while_waiting,
        )
        return IntentsApiBridge(
            client, {self.base.config.id: self.txmanager}, self.solver, SETTINGS,
            sleep=mine_while_waiting,
        )  # fmt: skip

    def quoted(self) -> httpx.Response:
        return httpx.Response(200, json=recorded_quote(self.solver, self.base.config.id))

    async def journal(self) -> list[SentTransaction]:
        async with self.base.sessions() as session:
            return list(await session.scalars(select(SentTransaction).order_by(SentTransaction.id)))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        txmanager = TxManager(
            base.chain, base.state, base.signer(), base.sessions, now=base.clock, holder="me"
        )
        yield World(base, txmanager, [], [])


async def test_a_quote_becomes_the_transactions_the_solver_sends(world: World) -> None:
    world.answer(world.quoted())
    quote = await world.bridge().quote(world.move)
    assert isinstance(quote, BridgeQuote)
    recorded = recorded_quote(world.solver, world.base.config.id)
    assert quote.request_id == recorded["steps"][0]["requestId"]
    assert quote.amount_out == int(recorded["details"]["currencyOut"]["amount"])
    assert [call.to for call in quote.calls] == [
        step["items"][0]["data"]["to"] for step in recorded["steps"]
    ]
    sent_body = json.loads(world.requests[0].content)
    assert sent_body["user"].lower() == sent_body["recipient"].lower() == world.solver.lower()


async def test_a_quote_kept_as_json_is_the_same_quote(world: World) -> None:
    world.answer(world.quoted())
    quote = await world.bridge().quote(world.move)
    assert isinstance(quote, BridgeQuote)
    assert BridgeQuote.of_document(json.loads(json.dumps(quote.document()))) == quote


async def test_a_refusal_the_bridge_states_is_final(world: World) -> None:
    refusal = {"message": "the solver holds too little", "errorCode": "INSUFFICIENT_LIQUIDITY"}
    world.answer(httpx.Response(400, json=refusal))
    outcome = await world.bridge().quote(world.move)
    assert outcome == Refused("bridge", "the solver holds too little", "INSUFFICIENT_LIQUIDITY")
    assert len(world.requests) == 1


@pytest.mark.parametrize("status_code", [500, 502, 503, 429])
async def test_the_bridges_failures_are_retried_then_unavailable(
    world: World, status_code: int
) -> None:
    world.answer(httpx.Response(status_code, json={"message": "busy"}))
    outcome = await world.bridge().quote(world.move)
    assert isinstance(outcome, Unavailable), outcome
    assert len(world.requests) == SETTINGS.bridge_attempts


async def test_a_lost_connection_is_retried_then_unavailable(world: World) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    world.answer(refuse)
    assert isinstance(await world.bridge().quote(world.move), Unavailable)
    assert len(world.requests) == SETTINGS.bridge_attempts


async def test_a_failure_then_an_answer_is_the_quote(world: World) -> None:
    world.answer(httpx.Response(503, json={"message": "busy"}), world.quoted())
    assert isinstance(await world.bridge().quote(world.move), BridgeQuote)
    assert len(world.requests) == 2


def _signature_step(quote: dict[str, Any]) -> None:
    quote["steps"][0]["kind"] = "signature"
    quote["steps"][0]["items"][0]["data"] = {
        "sign": {"signatureKind": "eip191", "message": "0x00"},
        "post": {"endpoint": "/authorize", "body": {}},
    }


def _other_recipient(quote: dict[str, Any]) -> None:
    quote["details"]["recipient"] = "0x" + "77" * 20


def _other_chain(quote: dict[str, Any]) -> None:
    quote["steps"][1]["items"][0]["data"]["chainId"] = 1


@pytest.mark.parametrize("change", [_signature_step, _other_recipient, _other_chain])
async def test_a_quote_the_solver_cannot_carry_out_alone_is_refused(
    world: World, change: Callable[[dict[str, Any]], None]
) -> None:
    document = copy.deepcopy(recorded_quote(world.solver, world.base.config.id))
    change(document)
    world.answer(httpx.Response(200, json=document))
    outcome = await world.bridge().quote(world.move)
    assert isinstance(outcome, Refused) and outcome.by == "bridge", outcome


async def _sent(world: World) -> tuple[IntentsApiBridge, SentMove]:
    world.answer(world.quoted())
    bridge = world.bridge()
    quote = await bridge.quote(world.move)
    assert isinstance(quote, BridgeQuote)
    sent = await bridge.send(quote)
    assert isinstance(sent, SentMove), sent
    return bridge, sent


async def test_send_waits_for_the_approval_and_never_signs_a_step_twice(world: World) -> None:
    bridge, sent = await _sent(world)
    approval, deposit = await world.journal()
    assert sent.tx_hashes == (approval.tx_hash, deposit.tx_hash)
    assert approval.purpose == step_purpose(sent.quote.request_id, 0)
    assert await bridge.send(sent.quote) == sent
    assert len(await world.journal()) == 2


async def test_the_chains_failures_are_retried_then_unavailable(world: World) -> None:
    world.answer(world.quoted())
    bridge = world.bridge()
    quote = await bridge.quote(world.move)
    assert isinstance(quote, BridgeQuote)
    world.chain.fail("estimate_gas", *[ChainUnreachable("down")] * SETTINGS.bridge_attempts)
    assert isinstance(await bridge.send(quote), Unavailable)
    assert await world.journal() == []
    world.chain.fail("estimate_gas", ChainUnreachable("down"))  # once: retried, then sent
    assert isinstance(await bridge.send(quote), SentMove)


async def test_a_failed_broadcast_is_sent_again_from_the_journal_never_signed_anew(
    world: World,
) -> None:
    """The node fails the first broadcast (the approval's): the journalled transaction is sent
    again, the same bytes, and the deposit after it; each step has one journal row."""
    world.answer(world.quoted())
    bridge = world.bridge()
    quote = await bridge.quote(world.move)
    assert isinstance(quote, BridgeQuote)
    world.chain.fail("send_raw", ChainUnreachable("down"))
    first = await bridge.send(quote)
    assert isinstance(first, SentMove), first
    approval, deposit = await world.journal()
    assert first.tx_hashes == (approval.tx_hash, deposit.tx_hash)
    assert approval.tx_hash in world.chain.receipts  # sent again, then mined
    assert deposit.tx_hash in world.chain.pending


async def test_a_deployment_without_a_bridge_url_has_no_bridge() -> None:
    assert IntentsApiBridge.configured(RebalancingSettings(), {}, "0x" + "11" * 20) is None
    bridge = IntentsApiBridge.configured(SETTINGS, {}, "0x" + "11" * 20)
    assert isinstance(bridge, IntentsApiBridge)
    await bridge.aclose()


async def test_a_revert_of_a_step_is_the_chains_refusal(world: World) -> None:
    world.answer(world.quoted())
    bridge = world.bridge()
    quote = await bridge.quote(world.move)
    assert isinstance(quote, BridgeQuote)
    world.chain.refuse_calls(quote.calls[0].to, b"")
    outcome = await bridge.send(quote)
    assert isinstance(outcome, Refused) and outcome.by == "chain", outcome


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("success", Arrived),
        ("refund", Refunded),
        ("failure", Failed),
        ("pending", Pending),
        ("waiting", Pending),
        ("submitted", Pending),
    ],
)
async def test_each_status_record_is_its_typed_status(
    world: World, status: str, expected: type
) -> None:
    bridge, sent = await _sent(world)
    world.chain.mine_block()
    world.answer(httpx.Response(200, json=status_record(status, world.base.config.id)))
    outcome = await bridge.status(sent)
    assert isinstance(outcome, expected), outcome
    if isinstance(outcome, Arrived):
        assert outcome.amount == sent.quote.amount_out
    if isinstance(outcome, Pending):
        assert outcome.stage == "bridge"


async def test_a_deposit_not_mined_yet_is_pending_on_the_origin(world: World) -> None:
    bridge, sent = await _sent(world)
    outcome = await bridge.status(sent)
    assert outcome == Pending("origin", "step 1 is not mined yet")


async def test_a_reverted_deposit_is_failed(world: World) -> None:
    bridge, sent = await _sent(world)
    world.chain.mine(sent.tx_hashes[1], status=0)
    assert isinstance(await bridge.status(sent), Failed)


async def test_a_bridge_that_cannot_answer_leaves_the_move_pending(world: World) -> None:
    bridge, sent = await _sent(world)
    world.chain.mine_block()
    world.answer(httpx.Response(503, json={"message": "busy"}))
    outcome = await bridge.status(sent)
    assert isinstance(outcome, Pending) and outcome.stage == "unknown", outcome


async def test_a_request_the_bridge_says_it_does_not_know_is_failed(world: World) -> None:
    bridge, sent = await _sent(world)
    world.chain.mine_block()
    world.answer(httpx.Response(404, json={"message": "no such request"}))
    assert isinstance(await bridge.status(sent), Failed)
