"""`python -m crossfill` is the `crossfill` command."""

from crossfill.cli import main

main()
