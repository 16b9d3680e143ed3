"""`crossfill` command line: one module per command group, the root in `cli.root`."""

from crossfill.cli.root import main

__all__ = ["main"]
