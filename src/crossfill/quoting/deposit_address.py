"""`useDepositAddress`, `strict`, `recoveryAddress`: the user pays by a plain transfer to an
address of its own request, on an EVM origin whose deployment has a deposit-address factory.

- strict (the default): the quoted currency, at least the quoted amount, before the quote
  expires; anything else is refunded.
- open: the quoted currency, any amount, any time; each arrival is priced afresh.

`refundTo` is required for an open address: anyone may pay it at any time (an exchange's hot
wallet, say), so `user` tells nothing about who a refund would reach. A strict address refunds
to `refundTo`, or to `user` when it is not given.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.contracts.deposit_addresses import deposit_address
from crossfill.kinds.evm.config import ChainConfig, FeeConfig
from crossfill.quoting import inputs
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest

STRICT, OPEN = "strict", "open"
# A deposit-address sweep: the clone's deployment (CREATE2 of 55 bytes) and the factory's call
# into the clone, on top of the Depository deposit it makes. Measured on the devnet with the
# clone deployed in the sweep: 89,720 gas for ether, 118,537 for USDC; budgeted with the
# deposit's own gas: 110,000 and 140,000 at the default fees.
SWEEP_OVERHEAD_GAS = 50_000


def sweep_gas(fees: FeeConfig, *, native: bool) -> int:
    """The gas budgeted for one sweep of ether (`native`) or of a token: what a quote charges
    for it, and what a transfer must be worth to be swept on its own."""
    deposit = fees.deposit_gas_native if native else fees.deposit_gas_erc20
    return deposit + SWEEP_OVERHEAD_GAS


@dataclass(frozen=True)
class DepositAddressRequest:
    strict: bool
    recovery_address: str | None


@dataclass(frozen=True)
class DepositAddressTerms:
    """The address a request is paid at, and how it judges what arrives."""

    address: str
    type: str  # strict | open
    recovery_address: str | None
    # The CREATE2 key: the order id of the request that owns the address.
    key: str


def deposit_address_request(
    body: QuoteRequest, origin: ChainConfig, *, same_chain: bool
) -> DepositAddressRequest | None:
    if not body.use_deposit_address:
        if body.strict or body.recovery_address:
            raise QuoteError(
                "UNSUPPORTED_EXECUTION_TYPE",
                "strict and recoveryAddress apply only with useDepositAddress: true",
            )
        return None
    if origin.contracts.deposit_address_factory is None:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            f"useDepositAddress: deposit addresses are not offered on chain {origin.id}",
        )
    if same_chain:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "useDepositAddress serves cross-chain requests; on one chain, send the transaction",
        )
    if body.use_permit:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE", "useDepositAddress and usePermit exclude each other"
        )
    strict = body.strict is not False
    if not strict and not body.refund_to:
        raise QuoteError(
            "INVALID_ADDRESS",
            "an open deposit address needs refundTo: anyone may pay it, so the user is not "
            "known to be the payer",
        )
    recovery = (
        inputs.address(body.recovery_address, "INVALID_ADDRESS", "recoveryAddress")
        if body.recovery_address
        else None
    )
    return DepositAddressRequest(strict=strict, recovery_address=recovery)


def terms_for(
    request: DepositAddressRequest, origin: ChainConfig, order_id: str
) -> DepositAddressTerms:
    factory = origin.contracts.deposit_address_factory
    assert factory is not None
    key = bytes.fromhex(order_id[2:])
    return DepositAddressTerms(
        address=deposit_address(factory, key, request.recovery_address),
        type=STRICT if request.strict else OPEN,
        recovery_address=request.recovery_address,
        key=order_id,
    )
