"""How the command line ends on bad input: one line on stderr, exit 2 (usage) or 1.

Click's own usage errors (a missing argument, an option out of range, an unknown
command) would print a boxed, wrapped message over several lines; `OneLineErrors`,
the root command group, prints them as `error: ... (see CMD --help)` on one line
instead. An OSError that nothing below caught (a path that is a directory, a folder
that does not exist) ends the same way with exit 1, never as a traceback, and so
does a StoreError (the run store locked, full, read-only or unreachable), whose
message names it a store error.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

from guardsearch.core.errors import StoreError

EXIT_FAILED = 1
EXIT_USAGE = 2


def one_line(message: str) -> str:
    """`message` on one line: its lines joined with '; ' (a YAML or pydantic error
    spans several)."""
    lines = [line.strip() for line in message.splitlines()]
    return "; ".join(line for line in lines if line and not line.startswith("For further"))


def print_error(message: str) -> None:
    """`error: MESSAGE` on stderr, one line however long (scripts and people grep it)."""
    sys.stderr.write(f"error: {one_line(message)}\n")
    sys.stderr.flush()


class OneLineErrors(TyperGroup):
    """The root group: every error that reaches it is printed on one line."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except typer.Abort:
            print_error("aborted")
            sys.exit(EXIT_FAILED)
        except StoreError as exc:
            print_error(str(exc))
            sys.exit(EXIT_FAILED)
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            print_error(f"{exc.strerror or exc}{where}")
            sys.exit(EXIT_FAILED)
        except Exception as exc:
            # Click's errors (typer vendors its own click: matched by shape, not class).
            code = getattr(exc, "exit_code", None)
            if not hasattr(exc, "format_message") or not isinstance(code, int):
                raise
            ctx = getattr(exc, "ctx", None)
            where = f" (see {ctx.command_path} --help)" if code == EXIT_USAGE and ctx else ""
            print_error(exc.format_message() + where)
            sys.exit(code)
        sys.exit(code if isinstance(code, int) else 0)
