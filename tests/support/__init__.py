"""What the test suites and the benchmarks share, one of each: the service launched in a
thread or a process of its own (`service`), the devnet's parts (`devnets`), the reader of its
database and throwaway PostgreSQL databases (`database`), a user's wallet on each kind of
chain (`wallets`), waiting
on what runs in its own time (`waiting`), and what both feed the service (`synthetic`
requests, `quote_fixtures`, the `hostile_websocket` client). The benchmarks import this package
and nothing else of `tests`; it imports no suite, and the tests import nothing of `bench`
(checked by `lint-imports`)."""
