"""The devnet exchange's assets: perps USDC and its spot tokens (names and ids as the real
exchange lists them; wei decimals 8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

PERPS_DEX: Final = ""
SPOT_DEX: Final = "spot"
# Balances are kept in units of 10**-8 of a token (every devnet spot token's wei decimals);
# perps USD is moved in at most 6 decimals, as the exchange's perps side counts it.
LEDGER_DECIMALS: Final = 8
PERPS_USD_DECIMALS: Final = 6


@dataclass(frozen=True)
class SpotToken:
    name: str
    index: int
    token_id: str  # 0x + 32 hex digits
    sz_decimals: int
    wei_decimals: int

    @property
    def wire_name(self) -> str:
        """How a `spotSend`/`sendAsset` names it: `NAME:0x<tokenId>`."""
        return f"{self.name}:{self.token_id}"

    def meta(self) -> dict[str, object]:
        return {
            "name": self.name,
            "szDecimals": self.sz_decimals,
            "weiDecimals": self.wei_decimals,
            "index": self.index,
            "tokenId": self.token_id,
            "isCanonical": True,
            "evmContract": None,
            "fullName": None,
        }


SPOT_TOKENS: Final = (
    SpotToken("USDC", 0, "0x6d1e7cde53ba9467b783cb7c530ce054", 8, 8),
    SpotToken("HYPE", 150, "0x0d01dc56dcaaca66ad901c959b4011ec", 2, 8),
)
USDC: Final = SPOT_TOKENS[0]


def spot_token(wire: str) -> SpotToken | None:
    """The token a wire name (`NAME:0x<id>`, or the bare name) means; None if unknown."""
    name, _, token_id = wire.partition(":")
    for token in SPOT_TOKENS:
        if token.name == name and (not token_id or token_id.lower() == token.token_id):
            return token
    return None


def token_by_name(name: str) -> SpotToken | None:
    return next((token for token in SPOT_TOKENS if token.name == name), None)
