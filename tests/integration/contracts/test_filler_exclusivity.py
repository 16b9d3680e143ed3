"""Filler.fillExclusive: an order an external solver won is filled only by that solver until
its exclusivity deadline, then by it, the operator's solver or a filler the owner allows; only
under terms the operator's solver signed (`domain.exclusive_fill`), paying exactly those, once
per order with `fill` too."""

from __future__ import annotations

import os
from dataclasses import replace

from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.contract import Contract
from web3.logs import DISCARD
from web3.types import TxParams, Wei

from crossfill.devnet import accounts
from crossfill.devnet.deploy import send
from crossfill.domain.exclusive_fill import ExclusiveFill
from crossfill.domain.fill_plan import Payment
from crossfill.kinds.evm.config import ChainConfig
from tests.integration.contracts.conftest import as_account, assert_reverts_with, fresh_account

NATIVE = "0x0000000000000000000000000000000000000000"
AMOUNT = 10**15


def _terms(
    chain: ChainConfig, web3: Web3, winner: str, *, exclusive_for: int, fill_for: int = 3600
) -> ExclusiveFill:
    now = int(web3.eth.get_block("latest")["timestamp"])
    recipient = Account.create().address
    return ExclusiveFill(
        chain_id=chain.id,
        filler=chain.contracts.filler,
        order_id="0x" + os.urandom(32).hex(),
        solver=winner,
        exclusivity_deadline=now + exclusive_for,
        fill_deadline=now + fill_for,
        payments=(Payment(recipient, NATIVE, AMOUNT),),
    )


def _signed(terms: ExclusiveFill, signer: LocalAccount | None = None) -> bytes:
    return bytes((signer or accounts.solver()).sign_message(terms.signable()).signature)


def _call(filler: Contract, terms: ExclusiveFill, signature: bytes):
    payments = [(p.recipient, p.currency, p.amount) for p in terms.payments]
    return filler.functions.fillExclusive(
        bytes.fromhex(terms.order_id[2:]), payments, terms.exclusivity(), signature
    )


def _filler(chain: ChainConfig, account: LocalAccount) -> Contract:
    return as_account(chain, account, "Filler", chain.contracts.filler)


def test_only_the_winner_fills_before_its_deadline_and_once(chain, web3, solver) -> None:
    winner = fresh_account(web3)
    stranger = fresh_account(web3)
    terms = _terms(chain, web3, winner.address, exclusive_for=600)
    signature = _signed(terms)
    refused = "NotExclusiveSolver(address,uint256)"
    for caller in (stranger, solver):
        assert_reverts_with(
            _call(_filler(chain, caller), terms, signature),
            refused,
            **{"from": caller.address, "value": AMOUNT},
        )

    filler = _filler(chain, winner)
    receipt = send(filler.w3, _call(filler, terms, signature), value=AMOUNT)

    recipient = terms.payments[0].recipient
    assert web3.eth.get_balance(recipient) == AMOUNT
    (event,) = filler.events.OrderFilled().process_receipt(receipt, errors=DISCARD)
    assert event.args == {"orderId": bytes.fromhex(terms.order_id[2:]), "solver": winner.address}
    assert_reverts_with(
        _call(filler, terms, signature),
        "AlreadyFilled(bytes32)",
        **{"from": winner.address, "value": AMOUNT},
    )
    # The operator's own fill path shares the once-only guard.
    operator = _filler(chain, solver)
    assert_reverts_with(
        operator.functions.fill(bytes.fromhex(terms.order_id[2:]), [(recipient, NATIVE, 1)], []),
        "AlreadyFilled(bytes32)",
        **{"from": solver.address, "value": 1},
    )


def test_terms_not_signed_by_the_operators_solver_are_refused(chain, web3) -> None:
    winner = fresh_account(web3)
    terms = _terms(chain, web3, winner.address, exclusive_for=600)
    signature = _signed(terms)
    filler = _filler(chain, winner)
    bad = "BadExclusivitySignature()"
    sent = {"from": winner.address, "value": AMOUNT}
    # Signed by the winner itself, or the terms changed after signing: less paid, a later
    # deadline, another recipient.
    assert_reverts_with(_call(filler, terms, _signed(terms, winner)), bad, **sent)
    less = Payment(terms.payments[0].recipient, NATIVE, AMOUNT - 1)
    cheaper = replace(terms, payments=(less,))
    assert_reverts_with(_call(filler, cheaper, signature), bad, **{**sent, "value": AMOUNT - 1})
    later = replace(terms, fill_deadline=terms.fill_deadline + 1)
    assert_reverts_with(_call(filler, later, signature), bad, **sent)
    elsewhere = Payment(winner.address, NATIVE, AMOUNT)
    redirected = replace(terms, payments=(elsewhere,))
    assert_reverts_with(_call(filler, redirected, signature), bad, **sent)
    # A stranger naming itself the exclusive solver has no signature for it.
    stranger = fresh_account(web3)
    itself = replace(terms, solver=stranger.address)
    by_stranger = {**sent, "from": stranger.address}
    assert_reverts_with(_call(_filler(chain, stranger), itself, signature), bad, **by_stranger)


def test_after_the_deadline_the_operator_and_allowed_fillers_may_fill(chain, web3, solver) -> None:
    winner = fresh_account(web3)
    stranger = fresh_account(web3)
    owner = accounts.deployer()
    terms = _terms(chain, web3, winner.address, exclusive_for=-1)
    signature = _signed(terms)
    assert_reverts_with(
        _call(_filler(chain, stranger), terms, signature),
        "NotExclusiveSolver(address,uint256)",
        **{"from": stranger.address, "value": AMOUNT},
    )
    operator = _filler(chain, solver)
    operator.functions.fillExclusive(
        bytes.fromhex(terms.order_id[2:]),
        [(p.recipient, p.currency, p.amount) for p in terms.payments],
        terms.exclusivity(),
        signature,
    ).call(TxParams({"from": solver.address, "value": Wei(AMOUNT)}))

    allowed = _filler(chain, owner)
    send(allowed.w3, allowed.functions.setAllowedFiller(stranger.address, True))
    try:
        by_stranger = _filler(chain, stranger)
        send(by_stranger.w3, _call(by_stranger, terms, signature), value=AMOUNT)
        assert web3.eth.get_balance(terms.payments[0].recipient) == AMOUNT
    finally:
        send(allowed.w3, allowed.functions.setAllowedFiller(stranger.address, False))


def test_a_late_winner_may_still_fill_but_not_after_the_orders_deadline(chain, web3) -> None:
    winner = fresh_account(web3)
    late = _terms(chain, web3, winner.address, exclusive_for=-10)
    filler = _filler(chain, winner)
    send(filler.w3, _call(filler, late, _signed(late)), value=AMOUNT)
    expired = _terms(chain, web3, winner.address, exclusive_for=-10, fill_for=-1)
    assert_reverts_with(
        _call(filler, expired, _signed(expired)),
        "FillExpired(uint256)",
        **{"from": winner.address, "value": AMOUNT},
    )
