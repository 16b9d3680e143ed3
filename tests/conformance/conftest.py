"""The real backends' fixtures, as the integration suites start them."""

from __future__ import annotations

from tests.integration.perps.conftest import exchange  # noqa: F401  (fixtures, registered by import)
