"""Deposits into the SVM vault sent in the worst order: the rules that decide which deposit is
a request's are the EVM chains' (`domain.deposit_checks`), so a retry after a refund is
refunded too and a stranger's first lamport does not decide the victim's request; and a refund
that would cost the vault more than it returns is kept."""

from __future__ import annotations

import re
from typing import Any

import httpx
from eth_account import Account
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account

from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.svm import programs
from tests.e2e.bridging import DESTINATION, NATIVE, REFUNDED, final_status, request_quote
from tests.support.waiting import wait_for
from tests.support.wallets.svm import airdrop, item_instructions, sign_and_send, sol_balance

SVM_ID = 792703809
SOL = "1" * 32
FEE = 5000  # lamports per signature
SOL_UNIT = 10**9


def _sol_to_eth(user: Keypair, amount: int) -> dict[str, Any]:
    return {
        "user": str(user.pubkey()), "originChainId": SVM_ID, "destinationChainId": DESTINATION,
        "originCurrency": SOL, "destinationCurrency": NATIVE, "amount": str(amount),
        "tradeType": "EXACT_INPUT", "recipient": Account.create().address,
    }  # fmt: skip


def _pay(rpc_url: str, payer: Keypair, lamports: int, order_id: str) -> None:
    vault = svm_accounts.solver().pubkey()
    sign_and_send(
        rpc_url, [programs.transfer_sol(payer.pubkey(), vault, lamports), programs.memo(order_id)],
        payer,
    )  # fmt: skip


def test_a_retry_after_a_refund_on_svm_is_refunded_too(
    svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, _seeded = svm_node
    user = Keypair()
    airdrop(node.rpc_url, user.pubkey(), 2 * SOL_UNIT)
    quote = request_quote(http, _sol_to_eth(user, SOL_UNIT))
    order_id, request_id = quote["protocol"]["v2"]["orderId"], quote["steps"][0]["requestId"]
    _pay(node.rpc_url, user, SOL_UNIT // 10, order_id)
    assert final_status(http, request_id, until=REFUNDED)["status"] == "refund"
    before = sol_balance(node.rpc_url, user.pubkey())
    _pay(node.rpc_url, user, SOL_UNIT, order_id)
    # Paid back in full: only the retry's own fee is gone.
    assert wait_for(
        lambda: sol_balance(node.rpc_url, user.pubkey()) == before - FEE, timeout=30, interval=0.3
    ), sol_balance(node.rpc_url, user.pubkey()) - before
    status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
    assert status["status"] == "refund"


def test_a_front_running_lamport_cannot_decide_the_victims_svm_request(
    svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, _seeded = svm_node
    victim, attacker = Keypair(), Keypair()
    airdrop(node.rpc_url, victim.pubkey(), 2 * SOL_UNIT)
    airdrop(node.rpc_url, attacker.pubkey(), SOL_UNIT)
    quote = request_quote(http, _sol_to_eth(victim, SOL_UNIT))
    order_id, request_id = quote["protocol"]["v2"]["orderId"], quote["steps"][0]["requestId"]
    _pay(node.rpc_url, attacker, 1, order_id)
    sign_and_send(node.rpc_url, item_instructions(quote["steps"][0]["items"][0]), victim)
    status = final_status(http, request_id)
    assert status["status"] == "success", status


def _close_token_account(owner: Keypair, mint: Pubkey) -> Instruction:
    """SPL Token's CloseAccount (instruction 9): the empty account's rent goes to its owner."""
    return Instruction(
        programs.TOKEN_PROGRAM_ID,
        bytes([9]),
        [
            AccountMeta(programs.token_account(owner.pubkey(), mint), False, True),
            AccountMeta(owner.pubkey(), False, True),
            AccountMeta(owner.pubkey(), True, False),
        ],
    )


def test_a_closed_token_account_cannot_make_a_dust_refund_fund_its_rent(
    svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    """One token unit paid in, the sender's token account closed in the same transaction: its
    refund would create the account again at the vault's cost (2,039,280 lamports of rent, for
    about 10,000 the attacker gets back by closing it again). Kept instead, with the reason."""
    node, seeded = svm_node
    holder, attacker = svm_accounts.users()[0], Keypair()
    airdrop(node.rpc_url, attacker.pubkey(), SOL_UNIT)
    mint, vault = seeded.usdc_mint, svm_accounts.solver().pubkey()
    sign_and_send(
        node.rpc_url,
        [
            programs.create_token_account(holder.pubkey(), attacker.pubkey(), mint),
            programs.transfer_token(holder.pubkey(), attacker.pubkey(), mint, 1, 6),
        ],
        holder,
    )
    vault_lamports = sol_balance(node.rpc_url, vault)
    sign_and_send(
        node.rpc_url,
        [
            programs.transfer_token(attacker.pubkey(), vault, mint, 1, 6),
            programs.memo("0x" + "5e" * 32),  # an order nobody quoted: refunded to its sender
            _close_token_account(attacker, mint),
        ],
        attacker,
    )

    def kept() -> bool:
        body = http.get("/metrics").text
        return (
            'crossfill_deposits_kept{chain_id="792703809",reason="AMOUNT_TOO_LOW_TO_REFUND"}'
            in (body)
        )

    assert wait_for(kept, timeout=30, interval=0.5)
    assert sol_balance(node.rpc_url, vault) >= vault_lamports  # no rent paid for the attacker


def _new_mint(rpc_url: str, holder: Keypair, amount: int, decimals: int) -> Pubkey:
    """A mint the chain's configuration does not serve, `amount` of it minted to `holder`."""
    authority, mint = Keypair(), Keypair()
    airdrop(rpc_url, authority.pubkey(), SOL_UNIT)
    rent = httpx.post(
        rpc_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "getMinimumBalanceForRentExemption",
              "params": [programs.MINT_ACCOUNT_SIZE]},
        timeout=10,
    ).json()["result"]  # fmt: skip
    create = create_account(
        CreateAccountParams(
            from_pubkey=authority.pubkey(), to_pubkey=mint.pubkey(), lamports=rent,
            space=programs.MINT_ACCOUNT_SIZE, owner=programs.TOKEN_PROGRAM_ID,
        )
    )  # fmt: skip
    init = programs.initialize_mint(mint.pubkey(), decimals, authority.pubkey())
    sign_and_send(rpc_url, [create, init], mint, fee_payer=authority)
    sign_and_send(
        rpc_url,
        [
            programs.create_token_account(authority.pubkey(), holder.pubkey(), mint.pubkey()),
            programs.mint_to(
                mint.pubkey(),
                programs.token_account(holder.pubkey(), mint.pubkey()),
                authority.pubkey(),
                amount,
            ),
        ],
        authority,
    )
    return mint.pubkey()


def _kept(http: httpx.Client, reason: str) -> int:
    found = re.search(
        rf'^crossfill_deposits_kept\{{chain_id="{SVM_ID}",reason="{reason}"\}} (\S+)$',
        http.get("/metrics").text,
        re.MULTILINE,
    )
    return int(float(found.group(1))) if found else 0


def test_every_deposit_of_a_token_the_chain_does_not_serve_is_recorded_and_kept(
    svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    """A token the service does not serve, paid into the vault's token account for it twice:
    the first transaction creates that account, and so names the vault; the second names only
    the account. Before: the second was never listed, never recorded (the money invariant:
    "not recorded yet"). Both are kept, with the reason."""
    node, _seeded = svm_node
    sender, vault = Keypair(), svm_accounts.solver().pubkey()
    airdrop(node.rpc_url, sender.pubkey(), SOL_UNIT)
    mint = _new_mint(node.rpc_url, sender, 1_000, 0)
    memo = programs.memo("0x" + "7a" * 32)
    sign_and_send(
        node.rpc_url,
        [
            programs.create_token_account(sender.pubkey(), vault, mint),
            programs.transfer_token(sender.pubkey(), vault, mint, 100, 0),
            memo,
        ],
        sender,
    )
    assert wait_for(lambda: _kept(http, "UNSERVED_CURRENCY") == 1, timeout=30, interval=0.5)
    sign_and_send(
        node.rpc_url, [programs.transfer_token(sender.pubkey(), vault, mint, 200, 0), memo], sender
    )
    assert wait_for(lambda: _kept(http, "UNSERVED_CURRENCY") == 2, timeout=30, interval=0.5), _kept(
        http, "UNSERVED_CURRENCY"
    )
