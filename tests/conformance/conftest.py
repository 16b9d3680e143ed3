"""The real backends' fixtures, started as the integration suites start them."""

from __future__ import annotations

from tests.integration.perps.conftest import exchange  # noqa: F401  (fixtures, registered by import)
from tests.integration.svm.conftest import seeded, svm_node  # noqa: F401  (fixtures)
