"""Quote errors: 400s with the compat notes' `errorCode`s."""

from __future__ import annotations

from crossfill.errors import BadRequest, ServiceUnavailable


class QuoteError(BadRequest):
    """A quote request that cannot be served as asked."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message, error_code=error_code)


class QuoteUnavailable(ServiceUnavailable):
    """The service lacks fresh chain state or a price to quote right now."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message, error_code=error_code)
