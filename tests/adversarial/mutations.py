"""Hypothesis strategies that mutate a valid quote body a few fields at a time: hostile values of
each field's kind (huge, negative, zero and non-numeric amounts, addresses of the wrong kind,
unknown chains and currencies, extreme slippage and app-fee bps, giant and odd `txs`), values of
the wrong type (nulls, floats, NaN, lists, objects, nesting thousands deep), unicode, fields
removed or added; and benign changes (the amount scaled, a referrer) that keep some bodies
valid, so the fuzzer is seen to reach planning."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from crossfill.api.schemas.quote import QuoteBody
from tests.adversarial.cross_vm import PERPS_ID, SVM_ID
from tests.adversarial.quote_seeds import Addresses, Seed
from tests.e2e.bridging import DESTINATION, ORIGIN

ENDPOINTS = ("/quote/v2", "/quote/v2", "/quote", "/price")


@dataclass(frozen=True)
class Nested:
    """A JSON value nested `depth` arrays (or objects) deep, written out as text: too deep for
    `json.dumps` to write."""

    depth: int
    objects: bool

    def text(self) -> str:
        if self.objects:
            return '{"a":' * self.depth + "1" + "}" * self.depth
        return "[" * self.depth + "]" * self.depth


@dataclass(frozen=True)
class Mutant:
    """A body to post: where, built from which kind of seed, and what was changed."""

    endpoint: str
    kind: str
    body: Any
    changes: tuple[str, ...]

    def encoded(self) -> bytes:
        """JSON as a client could send it: integers of any size, NaN and Infinity as Python
        writes them, nesting deeper than an encoder's recursion limit."""
        deep: list[Nested] = []

        def placeholder(value: object) -> str:
            assert isinstance(value, Nested), value
            deep.append(value)
            return f"\x00deep{len(deep) - 1}\x00"

        text = json.dumps(self.body, default=placeholder, ensure_ascii=False)
        for index, nested in enumerate(deep):
            text = text.replace(json.dumps(f"\x00deep{index}\x00"), nested.text())
        return text.encode("utf-8", "surrogatepass")


EXTREME_INTEGERS = (0, -1, 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 2**100, 2**256 - 1,
                    2**256, -(2**63), -(2**255), 10**80)  # fmt: skip
# Digits of other scripts (Arabic-Indic, fullwidth, superscript) are not decimal digits here.
ODD_NUMBERS = ("", " ", "1e18", "0x10", " 100", "100 ", "+1", "-1", "1.5", "1_000",
               "\u0661\u0662\u0663", "\uff11\uff12\uff13", "\u00b2", "0" * 100 + "1",
               "9" * 78, "9" * 79, "NaN", "Infinity", "\x00", "10**18")  # fmt: skip

wrong_types = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(EXTREME_INTEGERS),
    st.integers(min_value=-(2**300), max_value=2**300),
    st.text(max_size=40),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.builds(Nested, st.sampled_from((2, 64, 600, 5000, 40_000)), st.booleans()),
)
amounts = st.one_of(
    st.sampled_from(ODD_NUMBERS),
    st.sampled_from(EXTREME_INTEGERS).map(str),
    st.integers(min_value=-(2**300), max_value=2**300).map(str),
    st.integers(min_value=1, max_value=10**30).map(str),
)
bps = st.one_of(
    st.sampled_from(
        (
            "0",
            "1",
            "50",
            "4999",
            "5000",
            "5001",
            "10000",
            "10001",
            "-1",
            "abc",
            "50.5",
            "\u0665\u0660",
            str(2**256),
            str(2**64),
        )
    ),
    st.integers(min_value=-10, max_value=2**70).map(str),
)
integers = st.one_of(st.sampled_from(EXTREME_INTEGERS), st.integers(-(2**70), 2**70))
chains = st.one_of(
    st.sampled_from((ORIGIN, DESTINATION, SVM_ID, PERPS_ID, *EXTREME_INTEGERS)),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from((str(ORIGIN), float(ORIGIN))),
)
texts = st.one_of(
    st.text(max_size=80),
    st.sampled_from(("a" * 20_000, "\U0001f600" * 500, "\u202e", "\x00", "\ud800", "\uff46" * 40)),
)
calldata = st.one_of(
    st.sampled_from(
        ("0x", "0x0", "0xzz", "deadbeef", "0X00", "0x\uff21\uff22", "0x" + "ab" * 100_000)
    ),
    st.binary(max_size=64).map(lambda raw: "0x" + raw.hex()),
)


def _addresses(at: Addresses) -> st.SearchStrategy[Any]:
    evm, svm = at.evm_user, at.svm_user
    odd = ("", "0x", "0x" + "0" * 39, "0x" + "0" * 41, "0x" + "g" * 40, "0x" + "0" * 64,
           evm.upper(), evm.lower(), "0X" + evm[2:], svm.lower(), "1" * 31, "1" * 45,
           " " + evm, evm + "\n", "0x" + "\uff46" * 40, "0x" + "0" * 32)  # fmt: skip
    return st.one_of(st.sampled_from((*at.accounts, *at.currencies, *odd)), texts)


def _txs(at: Addresses) -> st.SearchStrategy[Any]:
    tx = st.fixed_dictionaries(
        {"to": _addresses(at)},
        optional={"value": amounts, "data": calldata, "originalTxValue": amounts},
    )
    return st.one_of(
        st.lists(tx, max_size=12),
        st.lists(st.one_of(tx, wrong_types), min_size=1, max_size=3),
        st.just([{"to": at.evm_recipient, "value": "1", "data": "0x"}] * 200),
    )


def _app_fees(at: Addresses) -> st.SearchStrategy[Any]:
    fee = st.fixed_dictionaries({"recipient": _addresses(at), "fee": bps})
    return st.one_of(
        st.lists(fee, max_size=12),
        st.lists(st.one_of(fee, wrong_types, st.just({"recipient": at.evm_user})), max_size=3),
        st.just([{"recipient": at.evm_user, "fee": "5000"}] * 2),
    )


def field_values(at: Addresses) -> dict[str, st.SearchStrategy[Any]]:
    """A strategy of hostile values for every field of the quote body, by its kind."""
    address, currency = _addresses(at), st.one_of(st.sampled_from(at.currencies), _addresses(at))
    named = st.sampled_from(("uniswap-v2", "execution", "swap", "relay", "app", "rent", "bogus"))
    options = st.lists(st.one_of(named, texts), max_size=6)
    kinds: dict[str, st.SearchStrategy[Any]] = {
        "address": address, "chain": chains, "currency": currency, "amount": amounts,
        "bps": bps, "integer": integers, "text": texts, "options": options,
        "boolean": st.booleans(), "txs": _txs(at), "app fees": _app_fees(at),
        "trade": st.one_of(st.sampled_from(("EXACT_INPUT", "EXACT_OUTPUT", "EXPECTED_OUTPUT",
                                            "exact_input", "EXACT_INPUT\x00")), texts),
        "protocol": st.one_of(st.sampled_from(("v1", "v2", "preferV2", "v3", "V2")), texts),
        "object": st.one_of(st.dictionaries(texts, wrong_types, max_size=4),
                            st.fixed_dictionaries({"userPublicKey": address})),
        "list": st.lists(wrong_types, max_size=4),
    }  # fmt: skip
    return {field: kinds[kind] for field, kind in FIELD_KINDS.items()}


FIELD_KINDS = {
    "user": "address", "originChainId": "chain", "destinationChainId": "chain",
    "originCurrency": "currency", "destinationCurrency": "currency", "amount": "amount",
    "tradeType": "trade", "recipient": "address", "refundTo": "address",
    "recoveryAddress": "address", "referrer": "text", "referrerAddress": "address",
    "txs": "txs", "txsGasLimit": "integer", "authorizationList": "list",
    "gasLimitForDepositSpecifiedTxs": "integer", "additionalData": "object",
    "depositFeePayer": "address", "maxRouteLength": "integer", "useSharedAccounts": "boolean",
    "includeComputeUnitLimit": "boolean", "refundOnOrigin": "boolean", "topupGas": "boolean",
    "topupGasAmount": "amount", "enableTrueExactOutput": "boolean", "explicitDeposit": "boolean",
    "useExternalLiquidity": "boolean", "useFallbacks": "boolean", "usePermit": "boolean",
    "permitExpiry": "integer", "includeProtocolData": "boolean", "useDepositAddress": "boolean",
    "strict": "boolean", "forceSolverExecution": "boolean", "slippageTolerance": "bps",
    "latePaymentSlippageTolerance": "bps", "appFees": "app fees", "subsidizeFees": "boolean",
    "sponsoredFeeComponents": "options", "maxSubsidizationAmount": "amount",
    "includedSwapSources": "options", "excludedSwapSources": "options",
    "includedOriginSwapSources": "options", "includedDestinationSwapSources": "options",
    "overridePriceImpact": "boolean", "disableSwapProviderPreference": "boolean",
    "disableOriginSwaps": "boolean", "originGasOverhead": "integer", "fixedRate": "bps",
    "ttl": "integer", "protocolVersion": "protocol",
}  # fmt: skip
assert set(FIELD_KINDS) == set(QuoteBody.model_fields), "every body field has a kind to fuzz"


@st.composite
def _change(draw: st.DrawFn, body: dict[str, Any], values: dict[str, st.SearchStrategy[Any]]
            ) -> str:  # fmt: skip
    """Change `body` in place, once; what was done."""
    field = draw(st.sampled_from(sorted(values)))
    how = draw(st.sampled_from(("hostile", "hostile", "wrong type", "remove", "unknown",
                                "nested", "benign", "benign", "benign")))  # fmt: skip
    if how == "benign":
        amount = int(body["amount"]) if str(body.get("amount", "")).isdigit() else 10**6
        body["amount"] = str(max(1, amount * draw(st.integers(1, 8)) // 4))
        body["referrer"] = draw(st.sampled_from(("fuzz", "app.example", "ü-wallet")))
        return f"benign amount {body['amount']}"
    if how == "remove":
        field = draw(st.sampled_from(sorted(body)))
        del body[field]
        return f"removed {field}"
    if how == "unknown":
        body[draw(st.text(min_size=1, max_size=20))] = draw(wrong_types)
        return "an unknown field"
    lists = [body[name] for name in ("txs", "appFees") if isinstance(body.get(name), list)]
    if how == "nested" and any(lists):
        item = draw(st.sampled_from(draw(st.sampled_from([items for items in lists if items]))))
        key = draw(st.sampled_from(("to", "value", "data", "recipient", "fee")))
        if isinstance(item, dict):
            item[key] = draw(st.one_of(values["amount"], values["recipient"], wrong_types))
            return f"nested {key}"
    body[field] = draw(wrong_types if how == "wrong type" else values[field])
    return f"{how} {field}"


def mutants(seed_bodies: tuple[Seed, ...], at: Addresses) -> st.SearchStrategy[Mutant]:
    """A seed with one to three changes (rarely a body that is no object at all)."""
    values = field_values(at)

    @st.composite
    def mutant(draw: st.DrawFn) -> Mutant:
        seed = draw(st.sampled_from(seed_bodies))
        endpoint = draw(st.sampled_from(ENDPOINTS))
        if draw(st.integers(0, 49)) == 0:
            return Mutant(endpoint, seed.kind, draw(wrong_types), ("no object",))
        body = json.loads(json.dumps(seed.body))  # a deep copy to change
        changes = tuple(draw(_change(body, values)) for _ in range(draw(st.integers(1, 3))))
        return Mutant(endpoint, seed.kind, body, changes)

    return mutant()


def found_before(seed_bodies: tuple[Seed, ...]) -> tuple[Mutant, ...]:
    """Mutants that once answered a 5xx or out of shape, tried on every run before the
    generated ones."""

    def changed(kind: str, route: tuple[int, int], swap: bool, endpoint: str,
                **fields: Any) -> Mutant:  # fmt: skip
        seed = next(
            seed
            for seed in seed_bodies
            if seed.kind == kind
            and (seed.body["originChainId"], seed.body["destinationChainId"]) == route
            and (seed.body["originCurrency"] != seed.body["destinationCurrency"]) == swap
        )
        changes = tuple(f"once failed: {name}" for name in fields)
        return Mutant(endpoint, kind, {**seed.body, **fields}, changes)

    huge = str(2**100)
    return (
        # The request row's USD value overflowed the database's BIGINT: a 500.
        changed("svm", (ORIGIN, SVM_ID), True, "/quote/v2", amount=huge),
        changed("perps", (ORIGIN, PERPS_ID), True, "/quote/v2", amount=huge),
        # The SVM deposit's u64 amount could not be encoded: a 500.
        changed("svm", (SVM_ID, DESTINATION), True, "/quote/v2", amount=huge),
        changed("svm", (SVM_ID, DESTINATION), True, "/price", amount=huge),
        # The refusal named the lone surrogate, which UTF-8 cannot encode: a 500.
        changed("evm", (ORIGIN, DESTINATION), True, "/quote/v2", includedSwapSources=["x\ud800"]),
        # A deposit to the exchange answered without `feeSponsorship`.
        changed("perps", (ORIGIN, PERPS_ID), True, "/quote/v2", referrer="fuzz"),
    )
