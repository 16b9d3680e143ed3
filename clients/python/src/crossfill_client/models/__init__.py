"""The interface's wire shapes as typed, immutable models (unknown fields are kept)."""

from crossfill_client.models.app_fees import AppFeeBalances
from crossfill_client.models.attestation import Attestation, AttestedRequest
from crossfill_client.models.chains import Chain, ChainCurrency, ChainList
from crossfill_client.models.common import Amount, Currency, CurrencyMetadata
from crossfill_client.models.gasless import (
    Authorization,
    ExecutionOptions,
    GaslessAccepted,
    GaslessExecution,
    RawCall,
)
from crossfill_client.models.listing import RequestFilters
from crossfill_client.models.quote import (
    Check,
    Details,
    EvmTransactionData,
    ExchangeActionData,
    FailedCallData,
    Fees,
    Quote,
    SignatureData,
    Step,
    StepItem,
    SvmInstruction,
    SvmTransactionData,
)
from crossfill_client.models.quote_request import AppFee, ExtraTransaction, QuoteRequest
from crossfill_client.models.records import RecordTransaction, RequestPage, RequestRecord
from crossfill_client.models.solver_orders import FillPayment, WonOrder, WonOrderList
from crossfill_client.models.status import RequestStatus, StatusRecord

__all__ = [
    "Amount",
    "AppFee",
    "AppFeeBalances",
    "Attestation",
    "AttestedRequest",
    "Authorization",
    "Chain",
    "ChainCurrency",
    "ChainList",
    "Check",
    "Currency",
    "CurrencyMetadata",
    "Details",
    "EvmTransactionData",
    "ExchangeActionData",
    "ExecutionOptions",
    "ExtraTransaction",
    "FailedCallData",
    "Fees",
    "FillPayment",
    "GaslessAccepted",
    "GaslessExecution",
    "Quote",
    "QuoteRequest",
    "RawCall",
    "RecordTransaction",
    "RequestFilters",
    "RequestPage",
    "RequestRecord",
    "RequestStatus",
    "SignatureData",
    "StatusRecord",
    "Step",
    "StepItem",
    "SvmInstruction",
    "SvmTransactionData",
    "WonOrder",
    "WonOrderList",
]
