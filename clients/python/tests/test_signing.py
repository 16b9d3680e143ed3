"""The wallets of the `signing` extra against reference implementations: the exchange's own
SDK for its actions, eth-account's recovery for EIP-712 and EIP-191, solders' verification for
SVM transactions."""

from __future__ import annotations

from eth_account import Account
from eth_account.messages import encode_defunct, encode_typed_data
from hyperliquid.utils import signing as exchange_sdk
from solders.keypair import Keypair
from solders.message import to_bytes_versioned
from solders.transaction import VersionedTransaction

from conftest import recorded
from crossfill.domain.set_code import Authorization as ServiceAuthorization
from crossfill.types import Address
from crossfill_client._execution.exchange import signed_action_body
from crossfill_client._execution.signatures import signature_of, typed_data
from crossfill_client.models import Quote, SignatureData, SvmTransactionData
from crossfill_client.models.quote import ExchangeActionData
from crossfill_client.signers import SvmTransaction
from crossfill_client.signing import EvmWallet, SvmWallet, sign_authorization

TESTNET_SIGNATURE_CHAIN = 0x66EEE  # what the exchange's SDK signs testnet actions on


def _withdrawal() -> tuple[SignatureData, ExchangeActionData]:
    quote = Quote.model_validate(recorded("quote_perps_withdrawal"))
    authorize, deposit = (step.items[0].data for step in quote.steps)
    assert isinstance(authorize, SignatureData) and isinstance(deposit, ExchangeActionData)
    return authorize, deposit


def test_exchange_action_is_signed_as_the_exchanges_own_sdk_signs_it() -> None:
    wallet = EvmWallet(Account.create())
    _authorize, deposit = _withdrawal()
    body = signed_action_body(wallet, deposit, signature_chain_id=TESTNET_SIGNATURE_CHAIN)
    action = dict(deposit.action.parameters)
    action["type"] = deposit.action.type
    reference = exchange_sdk.sign_send_asset_action(wallet.account, action, False)
    signature = body["signature"]
    assert isinstance(signature, dict)
    # The SDK writes r and s without leading zeros; the client always with 32 bytes.
    assert [int(str(signature[part]), 16) for part in ("r", "s")] == [
        int(reference[part], 16) for part in ("r", "s")
    ]
    assert signature["v"] == reference["v"]
    assert body["nonce"] == deposit.nonce


def test_authorization_item_recovers_to_the_wallet() -> None:
    wallet = EvmWallet(Account.create())
    authorize, _deposit = _withdrawal()
    signature = signature_of(wallet, authorize, step_id="authorize")
    sign = authorize.sign
    assert sign.primary_type is not None
    document = typed_data(sign.domain, sign.types, sign.primary_type, sign.value)
    signer = Account.recover_message(encode_typed_data(full_message=document), signature=signature)
    assert signer == wallet.address


def test_eip191_signs_text_or_the_bytes_of_hex() -> None:
    wallet = EvmWallet(Account.create())
    text, raw = wallet.sign_message("hello"), wallet.sign_message("0x" + "ab" * 32)
    assert Account.recover_message(encode_defunct(text="hello"), signature=text) == wallet.address
    by_bytes = encode_defunct(primitive=bytes.fromhex("ab" * 32))
    assert Account.recover_message(by_bytes, signature=raw) == wallet.address


def test_svm_transaction_is_signed_by_every_required_signer() -> None:
    quote = Quote.model_validate(recorded("quote_svm_withdrawal"))
    data = quote.steps[0].items[0].data
    assert isinstance(data, SvmTransactionData)
    user, sponsor = Keypair(), Keypair()
    # The recorded user is a devnet account: sign as a fresh one paying for a sponsor.
    instructions = tuple(
        instruction.model_copy(
            update={"keys": tuple(
                key.model_copy(update={"pubkey": str(user.pubkey())}) if key.is_signer else key
                for key in instruction.keys
            )}
        )
        for instruction in data.instructions
    )  # fmt: skip
    wallet = SvmWallet(user, fee_payer=sponsor)
    blockhash = "11111111111111111111111111111111"
    signed = wallet.sign_transaction(
        SvmTransaction(instructions, blockhash, fee_payer=str(sponsor.pubkey()))
    )
    transaction = VersionedTransaction.from_bytes(signed.raw)
    message = to_bytes_versioned(transaction.message)
    signers = transaction.message.account_keys[: len(transaction.signatures)]
    assert signers[0] == sponsor.pubkey() and user.pubkey() in signers
    assert all(
        sig.verify(key, message) for sig, key in zip(transaction.signatures, signers, strict=True)
    )
    assert signed.id == str(transaction.signatures[0])


def test_eip7702_authorization_recovers_to_the_account() -> None:
    wallet = EvmWallet(Account.create())
    delegate = "0x" + "42" * 20
    authorization = sign_authorization(wallet, chain_id=900001, delegate=delegate, nonce=7)
    assert (authorization.chain_id, authorization.nonce, authorization.address) == (
        900001, 7, delegate
    )  # fmt: skip
    assert authorization.y_parity in (0, 1)
    as_the_service_reads_it = ServiceAuthorization(
        chain_id=900001, address=Address(delegate), nonce=7, y_parity=authorization.y_parity,
        r=int(authorization.r, 16), s=int(authorization.s, 16),
    )  # fmt: skip
    assert as_the_service_reads_it.authority().lower() == wallet.address.lower()
