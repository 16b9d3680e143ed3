"""The adversarial suite: valid transactions sent in the worst order, against the real service
on the session devnet (the e2e suite's fixtures: `devnet`, `start_service`, `database`)."""

from __future__ import annotations

from tests.adversarial.cross_vm import (  # noqa: F401  (fixtures, registered by import)
    cross_vm,
    cross_vm_service,
    exchange,
    svm_node,
)
from tests.e2e.conftest import (  # noqa: F401  (fixtures, registered by import)
    client,
    database,
    postgres_url,
    service,
    start_service,
)
