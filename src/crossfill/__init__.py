"""Crossfill: a self-hostable cross-chain intent execution service."""

__version__ = "0.1.0"
