"""The HTTP API: app factory, routes per endpoint family, wire schemas, error handlers."""

from crossfill.api.app import create_app

__all__ = ["create_app"]
