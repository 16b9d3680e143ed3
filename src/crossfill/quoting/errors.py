"""Quote errors: 400s with the compat notes' `errorCode`s.

A refusal that came from simulating the request on a chain is answered in the spec's Detailed
shape (`QuoteSimulationFailed`): what was run (`failedCallData`), against about which block,
what the chain said (`errorData`), and the request id the quote would have had.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.errors import BadRequest, ServiceUnavailable


class QuoteError(BadRequest):
    """A quote request that cannot be served as asked."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message, error_code=error_code)


@dataclass(frozen=True)
class SimulatedCall:
    """The call a quote simulated: `failedCallData` of the Detailed error shape."""

    sender: str
    to: str
    data: str
    value: int

    def wire(self) -> dict[str, str]:
        return {"from": self.sender, "to": self.to, "data": self.data, "value": str(self.value)}


class QuoteSimulationFailed(QuoteError):
    """The request's own calls failed (or overran their gas) when simulated on a chain.

    `error_data` is the revert data as hex ("0x" when the call did not revert but needed more
    gas than budgeted); `simulated_block` the chain's head when the simulation ran.
    """

    def __init__(
        self,
        error_code: str,
        message: str,
        *,
        request_id: str,
        error_data: str,
        simulated_block: int,
        failed_call: SimulatedCall,
    ) -> None:
        super().__init__(error_code, message)
        self.request_id = request_id
        self.error_data = error_data
        self.simulated_block = simulated_block
        self.failed_call = failed_call

    def body(self) -> dict[str, object]:
        return {
            **super().body(),
            "errorData": self.error_data,
            "requestId": self.request_id,
            "approxSimulatedBlock": self.simulated_block,
            "failedCallData": self.failed_call.wire(),
        }


class QuoteUnavailable(ServiceUnavailable):
    """The service lacks fresh chain state or a price to quote right now."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message, error_code=error_code)
