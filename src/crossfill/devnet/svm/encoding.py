"""The JSON shapes the devnet SVM node answers in, as a validator's JSON-RPC spells them."""

from __future__ import annotations

import base64

import base58
from solders.account import Account
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.token.state import Mint, TokenAccount, TokenAccountState
from solders.transaction import VersionedTransaction

from crossfill.devnet.svm.ledger import JsonValue, Landed, Ledger, RpcFailure
from crossfill.kinds.svm.programs import TOKEN_ACCOUNT_SIZE, TOKEN_PROGRAM_ID

INVALID_PARAMS = -32602


def context(ledger: Ledger, value: JsonValue) -> JsonValue:
    return {"context": {"apiVersion": "2.2.0", "slot": ledger.slot}, "value": value}


def pubkey_param(value: object) -> Pubkey:
    if not isinstance(value, str):
        raise RpcFailure(INVALID_PARAMS, "Invalid param: expected a base58 pubkey string")
    try:
        return Pubkey.from_string(value)
    except ValueError as exc:
        raise RpcFailure(INVALID_PARAMS, f"Invalid param: {exc}") from exc


def account_json(ledger: Ledger, account: Account, encoding: str) -> JsonValue:
    """`base64` (the default of @solana/web3.js), `base58`, or `jsonParsed` for token data."""
    data: JsonValue
    raw = bytes(account.data)
    if encoding == "jsonParsed" and account.owner == TOKEN_PROGRAM_ID:
        data = _parsed_token_data(ledger, raw)
    elif encoding == "base58":
        data = [base58.b58encode(raw).decode(), "base58"]
    elif encoding in {"base64", "jsonParsed"}:
        data = [base64.b64encode(raw).decode(), "base64"]
    else:
        raise RpcFailure(INVALID_PARAMS, f"Invalid param: unsupported encoding {encoding}")
    return {
        "data": data,
        "executable": account.executable,
        "lamports": account.lamports,
        "owner": str(account.owner),
        "rentEpoch": 18446744073709551615,
        "space": len(raw),
    }


def _parsed_token_data(ledger: Ledger, raw: bytes) -> JsonValue:
    if len(raw) != TOKEN_ACCOUNT_SIZE:
        return {"program": "spl-token", "parsed": _mint_info(raw), "space": len(raw)}
    token = TokenAccount.from_bytes(raw)
    info = {
        "isNative": token.is_native is not None,
        "mint": str(token.mint),
        "owner": str(token.owner),
        "state": "frozen" if token.state == TokenAccountState.Frozen else "initialized",
        "tokenAmount": ledger.token_amount(token.amount, token.mint),
    }
    return {
        "program": "spl-token",
        "parsed": {"info": info, "type": "account"},
        "space": TOKEN_ACCOUNT_SIZE,
    }


def _mint_info(raw: bytes) -> JsonValue:
    mint = Mint.from_bytes(raw)
    return {
        "info": {
            "decimals": mint.decimals,
            "freezeAuthority": None
            if mint.freeze_authority is None
            else str(mint.freeze_authority),
            "isInitialized": mint.is_initialized,
            "mintAuthority": None if mint.mint_authority is None else str(mint.mint_authority),
            "supply": str(mint.supply),
        },
        "type": "mint",
    }


def decode_transaction(encoded: object, encoding: str) -> VersionedTransaction:
    """A wire transaction, base64 (what web3.js sends) or base58 (the legacy default)."""
    if not isinstance(encoded, str):
        raise RpcFailure(INVALID_PARAMS, "Invalid param: expected an encoded transaction")
    try:
        raw = (
            base64.b64decode(encoded, validate=True)
            if encoding == "base64"
            else (base58.b58decode(encoded))
        )
        return VersionedTransaction.from_bytes(raw)
    except ValueError as exc:
        raise RpcFailure(INVALID_PARAMS, f"failed to deserialize transaction: {exc}") from exc


def transaction_json(landed: Landed, encoding: str) -> JsonValue:
    tx = VersionedTransaction.from_bytes(landed.raw)
    message = tx.message
    version: JsonValue = 0 if isinstance(message, MessageV0) else "legacy"
    body: JsonValue
    if encoding == "base64":
        body = [base64.b64encode(landed.raw).decode(), "base64"]
    elif encoding == "json":
        body = {"signatures": [str(s) for s in tx.signatures], "message": _message_json(tx)}
    else:
        raise RpcFailure(INVALID_PARAMS, f"Invalid param: unsupported encoding {encoding}")
    return {
        "slot": landed.slot,
        "blockTime": landed.block_time,
        "version": version,
        "transaction": body,
        "meta": {
            "err": landed.err,
            "status": {"Ok": None} if landed.err is None else {"Err": landed.err},
            "fee": landed.fee,
            "preBalances": landed.pre_balances,
            "postBalances": landed.post_balances,
            "preTokenBalances": landed.pre_token_balances,
            "postTokenBalances": landed.post_token_balances,
            "logMessages": landed.logs,
            "innerInstructions": landed.inner_instructions,
            "rewards": [],
            "loadedAddresses": {"readonly": [], "writable": []},
            "computeUnitsConsumed": landed.units,
        },
    }


def _message_json(tx: VersionedTransaction) -> JsonValue:
    message = tx.message
    header = message.header
    shape: JsonValue = {
        "header": {
            "numRequiredSignatures": header.num_required_signatures,
            "numReadonlySignedAccounts": header.num_readonly_signed_accounts,
            "numReadonlyUnsignedAccounts": header.num_readonly_unsigned_accounts,
        },
        "accountKeys": [str(key) for key in message.account_keys],
        "recentBlockhash": str(message.recent_blockhash),
        "instructions": [
            {
                "programIdIndex": ix.program_id_index,
                "accounts": list(ix.accounts),
                "data": base58.b58encode(bytes(ix.data)).decode(),
                "stackHeight": None,
            }
            for ix in message.instructions
        ],
    }
    if isinstance(message, MessageV0):
        shape["addressTableLookups"] = [
            {
                "accountKey": str(lookup.account_key),
                "writableIndexes": list(lookup.writable_indexes),
                "readonlyIndexes": list(lookup.readonly_indexes),
            }
            for lookup in message.address_table_lookups
        ]
    return shape
