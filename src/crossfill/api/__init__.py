"""The HTTP API: app factory (`api.app`), routes per endpoint family, wire schemas, errors."""
