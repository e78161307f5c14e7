"""The `guardsearch` command line (typer + rich): `app` and its commands in cli/root.py.

`guardsearch --version` answers before the command-line library is imported (the one
answer that needs none of it); everything else goes through `app`, whose commands load
when they run (benchmarks/startup.py measures both).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guardsearch.cli.root import COMMANDS, app, load_command

__all__ = ["COMMANDS", "app", "load_command", "main"]


def main() -> None:
    """The console script `guardsearch` and `python -m guardsearch`."""
    if sys.argv[1:] == ["--version"]:
        from guardsearch import __version__

        sys.stdout.write(f"guardsearch {__version__}\n")
        return
    from guardsearch.cli.root import app

    app()


def __getattr__(name: str) -> Any:
    if name in ("COMMANDS", "app", "load_command"):
        from guardsearch.cli import root

        return getattr(root, name)
    raise AttributeError(f"module 'guardsearch.cli' has no attribute {name!r}")
