"""POST /authorize: the nonce-mapping body, parsed into the signed mapping."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from crossfill.api.params import ChainIdField
from crossfill.domain.identifiers import (
    UINT256_LIMIT,
    InvalidIdentifier,
    parse_address,
    parse_tx_hash,
    parse_uint,
)
from crossfill.domain.nonce_mapping import NonceMapping
from crossfill.errors import BadRequest
from crossfill.types import ChainId


class NonceMappingBody(BaseModel):
    """The authorize step's `post.body` (the perps-exchange withdrawal flow)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["nonce-mapping"]
    walletChainId: ChainIdField
    wallet: StrictStr = Field(max_length=100)
    depositor: StrictStr = Field(max_length=100)
    nonce: StrictInt | StrictStr
    id: StrictStr = Field(max_length=100)
    signatureChainId: ChainIdField
    # The official SDK adds its `source` to every signature post body; accepted, not stored.
    referrer: StrictStr | None = Field(default=None, max_length=200)

    def to_mapping(self) -> NonceMapping:
        try:
            return NonceMapping(
                wallet_chain_id=ChainId(self.walletChainId),
                wallet=parse_address(self.wallet, "wallet"),
                depositor=parse_address(self.depositor, "depositor"),
                request_id=parse_tx_hash(self.id, "id"),
                nonce=parse_uint(self.nonce, "nonce", maximum=UINT256_LIMIT - 1),
                signature_chain_id=ChainId(self.signatureChainId),
            )
        except InvalidIdentifier as exc:
            raise BadRequest(str(exc)) from None
