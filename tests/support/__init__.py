"""What the test suites and the benchmarks share: the service launched in a thread or a process
of its own, the reader of its database, a user's wallet on each kind of chain, and the data
both feed it. The benchmarks import this package and nothing else of `tests`; the tests import
nothing of `bench` (checked by `lint-imports`)."""
