"""The terminal every command prints to."""

from rich.console import Console

console = Console()
