"""An SVM chain's vault as the checker reads it, over plain JSON-RPC from a starting slot: every
successful transaction listed for the vault or one of its token accounts (the chain's own
list of them, `getTokenAccountsByOwner`), read with `getTransaction`.

A deposit is a transfer into the vault or its token account with its memo's order id, as the
service's pure reader (`kinds.svm.deposits.read_vault_deposits`) reads a transaction; an
operator's top-up (memo `crossfill:topup`) is none. A payment out is a transaction in which
the vault's lamports fall by more than the fee it paid, or one of its token balances falls:
each must be a fill the SVM payer journalled (`svm_payments`, purpose `fill`) paying the
request's recipient its quoted output, or the refund a deposit records; what a refund or fill
paid is the recipient's balance change in that currency, read from the transaction's own
balances (`meta.pre/postBalances`, `pre/postTokenBalances`).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import httpx

from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.deposits import read_vault_deposits
from crossfill.kinds.svm.programs import NATIVE_SOL_ADDRESS, TOKEN_PROGRAM_ID
from crossfill.store.tables import Deposit
from crossfill.workers.leased_fills import FILL
from tests.money.ledger import ChainDeposit, Shown
from tests.money.records import Records

PAGE = 1000
Landed = dict[str, Any]  # a `getTransaction` answer (json encoding)


def rpc(url: str, method: str, params: list[Any]) -> Any:
    reply = httpx.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=10
    )
    reply.raise_for_status()
    answer = reply.json()
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def slot(chain: SvmChainConfig) -> int:
    return int(rpc(chain.rpc_url, "getSlot", [{"commitment": "processed"}]))


def next_slot(chain: SvmChainConfig, *, timeout: float = 10.0) -> int:
    """The first slot whose transactions all land after this call: the node's slot is still
    open (more may land in it), so the next one, once it has begun."""
    open_slot, deadline = slot(chain), time.monotonic() + timeout
    while (now := slot(chain)) == open_slot:
        if time.monotonic() > deadline:
            raise RuntimeError(f"SVM chain {chain.id} stays at slot {open_slot}")
        time.sleep(0.02)
    return now


class SvmVaultLedger:
    """The vault's transactions from slot `start` on."""

    def __init__(self, chain: SvmChainConfig, start: int) -> None:
        self.chain_id = chain.id
        self.url = chain.rpc_url
        self.vault = chain.solver.address
        self.deposits: list[ChainDeposit] = []
        # The vault's payments out, by signature.
        self.paid_out: dict[str, Landed] = {}
        for signature in self._signatures_since(start):
            landed = self._landed(signature)
            if landed is None or (landed.get("meta") or {}).get("err") is not None:
                continue  # not readable yet, or failed: only its fee moved
            for deposit in read_vault_deposits(landed, self.vault):
                self.deposits.append(
                    ChainDeposit(
                        chain.id, signature, deposit.index, deposit.order_id or "",
                        deposit.sender, deposit.currency, deposit.amount,
                    )
                )  # fmt: skip
            if _pays_out(landed, self.vault):
                self.paid_out[signature] = landed

    def _signatures_since(self, start: int) -> list[str]:
        """Every signature listed for the vault or its token accounts in a slot from `start`,
        oldest first."""
        accounts = rpc(
            self.url,
            "getTokenAccountsByOwner",
            [self.vault, {"programId": str(TOKEN_PROGRAM_ID)}, {"encoding": "base64"}],
        )["value"]
        found: dict[str, int] = {}
        for address in [self.vault, *(account["pubkey"] for account in accounts)]:
            before: str | None = None
            while True:
                options: dict[str, Any] = {"limit": PAGE, "commitment": "confirmed"}
                if before is not None:
                    options["before"] = before
                listed = rpc(self.url, "getSignaturesForAddress", [address, options])
                found.update(
                    (entry["signature"], int(entry["slot"]))
                    for entry in listed
                    if int(entry["slot"]) >= start
                )
                if len(listed) < PAGE or int(listed[-1]["slot"]) < start:
                    break
                before = listed[-1]["signature"]
        return sorted(found, key=lambda signature: found[signature])

    def _landed(self, signature: str) -> Landed | None:
        options: dict[str, Any] = {
            "encoding": "json",
            "commitment": "confirmed",
            "maxSupportedTransactionVersion": 0,
        }
        landed: Landed | None = rpc(self.url, "getTransaction", [signature, options])
        return landed

    def shown(self, records: Records) -> Shown:
        """Each payment out the payer journalled as a fill, checked to pay the request's
        recipient its quoted output; every other one is left for a refund to explain."""
        shown = Shown()
        for signature, landed in self.paid_out.items():
            attempt = records.svm_payments.get(signature)
            request = records.requests.get(attempt.payment_key) if attempt else None
            if attempt is None or attempt.purpose != FILL or request is None:
                shown.payouts.add(signature)
                continue
            shown.fills[request.order_id] += 1
            paid = received(landed, request.recipient, request.destination_currency)
            if paid != int(request.amount_out):
                shown.broken.append(
                    f"fill {self.chain_id}:{signature} of request {request.id} pays {paid} of "
                    f"{request.destination_currency}; {request.amount_out} were quoted"
                )
        return shown

    def refund_paid(self, deposit: ChainDeposit, part: Deposit, records: Records) -> int | None:
        """What the refund paid the depositor (or the request's `refundTo`) in the deposit's
        currency, when it is a successful payment out of the vault."""
        signature = str(part.refund_tx_hash)
        landed = self.paid_out.get(signature) or self._landed(signature)
        if landed is None or (landed.get("meta") or {}).get("err") is not None:
            return None
        if not _pays_out(landed, self.vault):
            return None
        request = records.requests.get(part.request_id) if part.request_id else None
        recipients = {deposit.depositor, *([request.refund_to] if request else [])}
        paid = sum(received(landed, recipient, deposit.currency) for recipient in recipients)
        return paid or None

    def paid_back_too(self, deposit: ChainDeposit, part: Deposit) -> bool:
        return False  # every payment out of the vault is matched to one record


def _keys(landed: Landed) -> list[str]:
    loaded = (landed.get("meta") or {}).get("loadedAddresses") or {}
    return [
        *landed["transaction"]["message"]["accountKeys"],
        *(loaded.get("writable") or []),
        *(loaded.get("readonly") or []),
    ]


def _token_changes(landed: Landed, owner: str) -> Counter[str]:
    """How much each of `owner`'s token balances (by mint) changed in the transaction."""
    meta = landed["meta"]
    changes: Counter[str] = Counter()
    for sign, name in ((-1, "preTokenBalances"), (1, "postTokenBalances")):
        for balance in meta.get(name) or []:
            if balance.get("owner") == owner:
                changes[balance["mint"]] += sign * int(balance["uiTokenAmount"]["amount"])
    return changes


def received(landed: Landed, recipient: str, currency: str) -> int:
    """What `recipient` gained in `currency` (lamports, or a mint's units) in the transaction."""
    if currency != NATIVE_SOL_ADDRESS:
        return _token_changes(landed, recipient)[currency]
    keys = _keys(landed)
    if recipient not in keys:
        return 0
    index, meta = keys.index(recipient), landed["meta"]
    fee = int(meta["fee"]) if index == 0 else 0
    return int(meta["postBalances"][index]) - int(meta["preBalances"][index]) + fee


def _pays_out(landed: Landed, vault: str) -> bool:
    """Whether the vault's lamports fell by more than the fee it paid, or a token of it fell."""
    return received(landed, vault, NATIVE_SOL_ADDRESS) < 0 or any(
        change < 0 for change in _token_changes(landed, vault).values()
    )
