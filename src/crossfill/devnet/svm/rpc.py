"""The devnet SVM node's JSON-RPC methods over its ledger (what wallets and web3.js call)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Final

from solders.hash import Hash
from solders.transaction import VersionedTransaction

from crossfill.devnet.svm.encoding import (
    INVALID_PARAMS,
    account_json,
    context,
    decode_transaction,
    pubkey_param,
    transaction_json,
)
from crossfill.devnet.svm.ledger import LAMPORTS_PER_SIGNATURE, JsonValue, Ledger, RpcFailure

METHOD_NOT_FOUND: Final = -32601
# What a validator answers a sendTransaction whose preflight failed.
PREFLIGHT_FAILURE: Final = -32002
MAX_AIRDROP_LAMPORTS: Final = 1_000 * 10**9
MAX_SIGNATURES_LIMIT: Final = 1000

Handler = Callable[[Ledger, list[JsonValue]], JsonValue]


def _param(params: list[JsonValue], index: int) -> JsonValue:
    return params[index] if len(params) > index else None


def _config(params: list[JsonValue], index: int) -> dict[str, JsonValue]:
    found = _param(params, index)
    return found if isinstance(found, dict) else {}


def _int_param(params: list[JsonValue], index: int, name: str) -> int:
    found = _param(params, index)
    if not isinstance(found, int) or isinstance(found, bool) or found < 0:
        raise RpcFailure(INVALID_PARAMS, f"Invalid param: {name} must be a non-negative integer")
    return found


def _latest_blockhash(ledger: Ledger, _params: list[JsonValue]) -> JsonValue:
    blockhash, last_valid = ledger.latest_blockhash()
    return context(ledger, {"blockhash": blockhash, "lastValidBlockHeight": last_valid})


def _balance(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    return context(ledger, ledger.balance(pubkey_param(_param(params, 0))))


def _account_info(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    encoding = _config(params, 1).get("encoding", "base58")
    found = ledger.account(pubkey_param(_param(params, 0)))
    return context(ledger, None if found is None else account_json(ledger, found, encoding))


def _multiple_accounts(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    addresses = _param(params, 0)
    if not isinstance(addresses, list) or len(addresses) > 100:
        raise RpcFailure(INVALID_PARAMS, "Invalid param: expected at most 100 pubkeys")
    encoding = _config(params, 1).get("encoding", "base64")
    accounts = [ledger.account(pubkey_param(address)) for address in addresses]
    return context(
        ledger,
        [None if found is None else account_json(ledger, found, encoding) for found in accounts],
    )


def _token_accounts_by_owner(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    owner = pubkey_param(_param(params, 0))
    selector = _config(params, 1)
    encoding = _config(params, 2).get("encoding", "base64")
    wanted_mint = pubkey_param(selector["mint"]) if "mint" in selector else None
    if wanted_mint is None and "programId" not in selector:
        raise RpcFailure(INVALID_PARAMS, "Invalid param: give a mint or a programId")
    listed = []
    for address, token in ledger.token_accounts_of(owner):
        if wanted_mint is not None and token.mint != wanted_mint:
            continue
        account = ledger.account(address)
        if account is not None:
            listed.append(
                {"pubkey": str(address), "account": account_json(ledger, account, encoding)}
            )
    return context(ledger, listed)


def _token_account_balance(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    token = ledger.token_account(pubkey_param(_param(params, 0)))
    if token is None:
        raise RpcFailure(INVALID_PARAMS, "Invalid param: not a Token account")
    return context(ledger, ledger.token_amount(token.amount, token.mint))


def _preflight(ledger: Ledger, tx: VersionedTransaction) -> None:
    err, logs, units = ledger.simulate(tx)
    if err is not None:
        raise RpcFailure(
            PREFLIGHT_FAILURE,
            f"Transaction simulation failed: {err}",
            {"err": err, "logs": logs, "accounts": None, "unitsConsumed": units},
        )


def _send_transaction(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    """Lands the transaction in the current slot; a duplicate answers its signature again.

    With `skipPreflight`, a transaction whose blockhash expired is dropped (its signature is
    answered and never lands), as a leader drops it; with preflight it is refused.
    """
    config = _config(params, 1)
    tx = decode_transaction(_param(params, 0), config.get("encoding", "base58"))
    signature = str(tx.signatures[0])
    if ledger.landed(signature) is not None:
        return signature
    if not all(tx.verify_with_results()):
        raise RpcFailure(
            INVALID_PARAMS, "invalid transaction: Transaction did not pass signature verification"
        )
    skip_preflight = bool(config.get("skipPreflight", False))
    if not ledger.blockhash_valid(tx.message.recent_blockhash):
        if skip_preflight:
            return signature
        raise RpcFailure(
            PREFLIGHT_FAILURE,
            "Transaction simulation failed: Blockhash not found",
            {"err": "BlockhashNotFound", "logs": [], "accounts": None, "unitsConsumed": 0},
        )
    if not skip_preflight:
        _preflight(ledger, tx)
    ledger.execute(tx)
    return signature


def _simulate_transaction(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    config = _config(params, 1)
    tx = decode_transaction(_param(params, 0), config.get("encoding", "base58"))
    if not config.get("replaceRecentBlockhash") and not ledger.blockhash_valid(
        tx.message.recent_blockhash
    ):
        value: JsonValue = {"err": "BlockhashNotFound", "logs": [], "unitsConsumed": 0}
    else:
        err, logs, units = ledger.simulate(tx)
        value = {"err": err, "logs": logs, "unitsConsumed": units}
    value.update(accounts=None, returnData=None)
    return context(ledger, value)


def _signature_statuses(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    signatures = _param(params, 0)
    if not isinstance(signatures, list) or len(signatures) > 256:
        raise RpcFailure(INVALID_PARAMS, "Invalid param: expected at most 256 signatures")
    statuses: list[JsonValue] = []
    for signature in signatures:
        landed = ledger.landed(signature) if isinstance(signature, str) else None
        if landed is None:
            statuses.append(None)
            continue
        commitment = ledger.commitment_of(landed.slot)
        statuses.append(
            {
                "slot": landed.slot,
                "confirmations": None if commitment == "finalized" else ledger.slot - landed.slot,
                "err": landed.err,
                "status": {"Ok": None} if landed.err is None else {"Err": landed.err},
                "confirmationStatus": commitment,
            }
        )
    return context(ledger, statuses)


def _transaction(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    signature = _param(params, 0)
    landed = ledger.landed(signature) if isinstance(signature, str) else None
    if landed is None or not landed.raw:
        return None
    return transaction_json(landed, _config(params, 1).get("encoding", "json"))


def _signatures_for_address(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    config = _config(params, 1)
    limit = config.get("limit", MAX_SIGNATURES_LIMIT)
    if not isinstance(limit, int) or not 1 <= limit <= MAX_SIGNATURES_LIMIT:
        raise RpcFailure(INVALID_PARAMS, "Invalid param: limit must be 1..1000")
    listed = ledger.signatures_for(pubkey_param(_param(params, 0)))
    signatures = [landed.signature for landed in listed]
    if (before := config.get("before")) in signatures:
        listed = listed[signatures.index(before) + 1 :]
    if (until := config.get("until")) in signatures:
        listed = listed[: [landed.signature for landed in listed].index(until)]
    return [
        {
            "signature": landed.signature,
            "slot": landed.slot,
            "err": landed.err,
            "memo": landed.memo,
            "blockTime": landed.block_time,
            "confirmationStatus": ledger.commitment_of(landed.slot),
        }
        for landed in listed[:limit]
    ]


def _fee_for_message(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    encoded = _param(params, 0)
    if not isinstance(encoded, str):
        raise RpcFailure(INVALID_PARAMS, "Invalid param: expected a base64 message")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except ValueError as exc:
        raise RpcFailure(INVALID_PARAMS, f"Invalid param: {exc}") from exc
    # The first byte of a message (after a v0 prefix) counts its required signatures.
    signers = raw[1] if raw and raw[0] & 0x80 else (raw[0] if raw else 0)
    return context(ledger, signers * LAMPORTS_PER_SIGNATURE)


def _airdrop(ledger: Ledger, params: list[JsonValue]) -> JsonValue:
    address = pubkey_param(_param(params, 0))
    lamports = _int_param(params, 1, "lamports")
    if lamports > MAX_AIRDROP_LAMPORTS:
        raise RpcFailure(INVALID_PARAMS, f"airdrop is limited to {MAX_AIRDROP_LAMPORTS} lamports")
    return ledger.airdrop(address, lamports)


def _epoch_info(ledger: Ledger, _params: list[JsonValue]) -> JsonValue:
    return {
        "absoluteSlot": ledger.slot,
        "blockHeight": ledger.block_height,
        "epoch": 0,
        "slotIndex": ledger.slot,
        "slotsInEpoch": 432_000,
        "transactionCount": len(ledger.history),
    }


METHODS: Final[dict[str, Handler]] = {
    "getLatestBlockhash": _latest_blockhash,
    "getBalance": _balance,
    "getAccountInfo": _account_info,
    "getMultipleAccounts": _multiple_accounts,
    "getTokenAccountsByOwner": _token_accounts_by_owner,
    "getTokenAccountBalance": _token_account_balance,
    "sendTransaction": _send_transaction,
    "simulateTransaction": _simulate_transaction,
    "getSignatureStatuses": _signature_statuses,
    "getTransaction": _transaction,
    "getSignaturesForAddress": _signatures_for_address,
    "getSlot": lambda ledger, _params: ledger.slot,
    "getBlockHeight": lambda ledger, _params: ledger.block_height,
    "getMinimumBalanceForRentExemption": lambda ledger, params: (
        ledger.svm.minimum_balance_for_rent_exemption(_int_param(params, 0, "dataLength"))
    ),
    "getFeeForMessage": _fee_for_message,
    "requestAirdrop": _airdrop,
    "isBlockhashValid": lambda ledger, params: context(
        ledger, ledger.blockhash_valid(_blockhash_param(params))
    ),
    "getEpochInfo": _epoch_info,
    "getHealth": lambda _ledger, _params: "ok",
    "getVersion": lambda _ledger, _params: {"solana-core": "2.2.0", "feature-set": 0},
    "getGenesisHash": lambda ledger, _params: ledger.genesis_hash,
}


def _blockhash_param(params: list[JsonValue]) -> Hash:
    found = _param(params, 0)
    try:
        return Hash.from_string(found) if isinstance(found, str) else Hash.default()
    except ValueError as exc:
        raise RpcFailure(INVALID_PARAMS, f"Invalid param: {exc}") from exc


def call(ledger: Ledger, method: str, params: list[JsonValue]) -> JsonValue:
    handler = METHODS.get(method)
    if handler is None:
        raise RpcFailure(METHOD_NOT_FOUND, f"Method not found: {method}")
    return handler(ledger, params)
