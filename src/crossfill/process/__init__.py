"""The service process: uvicorn serving the API, this process's workers beside it, API-only
replicas. The composition root of a running service (`crossfill run`, `crossfill api`)."""
