"""Background workers: indexer and solver per chain, run by the service process."""
