"""The spec's enumerations that listings filter on."""

from __future__ import annotations

FAIL_REASONS = frozenset(
    [
        "UNKNOWN",
        "SLIPPAGE",
        "AMOUNT_TOO_LOW_TO_REFUND",
        "DEPOSIT_ADDRESS_MISMATCH",
        "DEPOSIT_CHAIN_MISMATCH",
        "INCORRECT_DEPOSIT_CURRENCY",
        "DOUBLE_SPEND",
        "SOLVER_CAPACITY_EXCEEDED",
        "SOLVER_BALANCE_TOO_LOW",
        "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL",
        "NEGATIVE_NEW_AMOUNT_AFTER_FEES",
        "NO_QUOTES",
        "MISSING_REVERT_DATA",
        "REVERSE_SWAP_FAILED",
        "GENERATE_SWAP_FAILED",
        "TOO_LITTLE_RECEIVED",
        "EXECUTION_REVERTED",
        "NEW_CALLDATA_INCLUDES_HIGHER_RENT_FEE",
        "TRANSACTION_REVERTED",
        "TRANSACTION_TOO_LARGE",
        "ORIGIN_CURRENCY_MISMATCH",
        "NO_INTERNAL_SWAP_ROUTES_FOUND",
        "SWAP_USES_TOO_MUCH_GAS",
        "INSUFFICIENT_FUNDS_FOR_RENT",
        "SPONSOR_BALANCE_TOO_LOW",
        "ORDER_EXPIRED",
        "ORDER_IS_CANCELLED",
        "TRANSFER_FROM_FAILED",
        "TRANSFER_FAILED",
        "SIGNATURE_EXPIRED",
        "INVALID_SIGNATURE",
        "INSUFFICIENT_NATIVE_TOKENS_SUPPLIED",
        "TRANSFER_AMOUNT_EXCEEDS_ALLOWANCE",
        "TRANSFER_AMOUNT_EXCEEDS_BALANCE",
        "INVALID_SENDER",
        "ACCOUNT_ABSTRACTION_INVALID_NONCE",
        "ACCOUNT_ABSTRACTION_SIGNATURE_ERROR",
        "SEAPORT_INEXACT_FRACTION",
        "TOKEN_NOT_TRANSFERABLE",
        "ZERO_SELL_AMOUNT",
        "MINT_NOT_ACTIVE",
        "ERC_1155_TOO_MANY_REQUESTED",
        "INCORRECT_PAYMENT",
        "INVALID_GAS_PRICE",
        "FLUID_DEX_ERROR",
        "ORDER_ALREADY_FILLED",
        "SEAPORT_INVALID_FULFILLER",
        "INVALID_SIGNER",
        "MINT_QUANTITY_EXCEEDS_MAX_PER_WALLET",
        "MINT_QUANTITY_EXCEEDS_MAX_SUPPLY",
        "JUPITER_INVALID_TOKEN_ACCOUNT",
        "INVALID_NONCE",
        "ACCOUNT_ABSTRACTION_GAS_LIMIT",
        "CONTRACT_PAUSED",
        "SWAP_IMPACT_TOO_HIGH",
        "INSUFFICIENT_POOL_LIQUIDITY",
        "TTL_EXPIRED",
        "DEPOSIT_CONFIRMATION_TIMEOUT",
        "ORPHANED_DEPOSIT_REFUND",
        "GASLESS_PERMIT_BALANCE_TOO_LOW",
        "MANUAL_ADMIN_REFUND",
        "QUOTED_GAS_LIMIT_EXCEEDED",
        "DESTINATION_TOKEN_TRANSFER_REJECTED",
        "DEPOSIT_REORGED",
        "BLOCKED_WALLET",
        "PROTOCOL_DEADLINE_EXPIRED",
        "TRANSACTION_NOT_INCLUDED",
        "TRANSACTION_SUBMISSION_FAILED",
    ]
)
REFUND_FAIL_REASONS = frozenset(
    {
        "AMOUNT_TOO_LOW_TO_REFUND",
        "NEGATIVE_NEW_AMOUNT_AFTER_FEES",
        "SWAP_CURRENCY_NOT_ON_ORIGIN",
        "REFUND_RECIPIENT_IS_VASP",
    }
)
REQUEST_TYPES = (
    "Bridge",
    "Crosschain Swap",
    "Same-chain Swap",
    "Send",
    "Wrap",
    "Unwrap",
    "Call",
)
# Order matters: a request's features are stored as bits in this order.
FEATURES = ("gasless_execution", "fast_fill", "gas_top_up", "app_fees", "deposit_address")


def features_mask(features: tuple[str, ...] | list[str]) -> int:
    mask = 0
    for feature in features:
        mask |= 1 << FEATURES.index(feature)
    return mask


def features_of(mask: int) -> list[str]:
    return [feature for bit, feature in enumerate(FEATURES) if mask & (1 << bit)]
