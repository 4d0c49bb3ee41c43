"""The command line: `tracesql COMMAND ...` (main), one module per group of commands, and what they share
(common). Nothing outside this package imports it."""
from tracesql.cli.main import main

__all__ = ["main"]
