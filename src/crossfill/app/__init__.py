"""The application layer: use cases (create a quote, ...) and the composition of the workers.
`api/` and the CLI call it; it calls `quoting/` (pure planning), `chains/` and `store/`."""
