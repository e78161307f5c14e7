"""Code the model writes: read one Python module out of its answer and vet it by its AST.

`parse_module` takes the model's text (bare code or a ``` fence), keeps the
definitions (functions, imports, constants) and drops what would run on import
(`if __name__ == "__main__":` blocks, example calls), and checks that the requested
functions are there. `allowlist_problems` lists what the module may not do: import
beyond `ALLOWED_IMPORTS`, touch a dunder attribute, or name `open`, `exec`, `eval`,
`__import__` and the other ways out (`FORBIDDEN_NAMES`). Both raise or return
feedback the model can act on; neither runs any of the code (guards/sandbox.py does).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from guardsearch.core.errors import ParseError

ALLOWED_IMPORTS = frozenset({"itertools", "math", "fractions", "functools", "collections"})
FORBIDDEN_NAMES = frozenset(
    {
        "open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars",
        "getattr", "setattr", "delattr", "input", "breakpoint", "memoryview", "help",
        "exit", "quit", "__builtins__", "__loader__", "__spec__",
    }
)  # fmt: skip
MAX_SOURCE_CHARS = 20_000
_FENCE = re.compile(r"```(?:python|py|Python)?[^\n]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class CodeModule:
    """A vetted module's source and the names of the functions it defines."""

    source: str
    functions: tuple[str, ...]


def _candidates(text: str) -> list[str]:
    blocks = [b for b in _FENCE.findall(text) if b.strip()]
    if "```" in text and not blocks:  # an unclosed fence: the code runs to the end
        blocks = [re.sub(r"^.*?```[^\n]*\n", "", text, count=1, flags=re.DOTALL)]
    return ["\n\n".join(blocks)] if blocks else [text]


def _keep(node: ast.stmt) -> bool:
    """Definitions stay; statements that would run on import (main blocks, calls) go."""
    if isinstance(node, ast.If):
        test = node.test
        return not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
                    and test.left.id == "__name__")  # fmt: skip
    return not isinstance(node, ast.Expr) or isinstance(node.value, ast.Constant)


def parse_module(text: str, required: Sequence[str]) -> CodeModule:
    """The Python module in `text`, reduced to its definitions; `ParseError` with feedback
    when it does not parse or lacks one of the `required` functions."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError("the answer is empty; write the Python function(s) asked for")
    if len(text) > MAX_SOURCE_CHARS:
        raise ParseError(f"the answer is too long ({len(text)} characters)")
    source = _candidates(text)[0]
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        raise ParseError(
            f"the code does not parse: {exc.msg} at line {exc.lineno}: {line!r}; "
            "answer with one Python code block"
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"the code does not parse: {exc}") from exc
    tree.body = [n for n in tree.body if _keep(n)]
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    missing = [name for name in required if name not in defined]
    if missing:
        raise ParseError(
            f"the code does not define {', '.join(f'{m}()' for m in missing)}; "
            f"define it at the top level (found: {', '.join(defined) or 'no functions'})"
        )
    return CodeModule(source=ast.unparse(tree), functions=tuple(defined))


def allowlist_problems(source: str, allowed: frozenset[str] = ALLOWED_IMPORTS) -> list[str]:
    """What in `source` the sandbox's rules forbid (empty: nothing), each with its line."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"the code does not parse: {exc.msg}"]
    problems: list[str] = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or "."]
            )
            for name in names:
                if name.split(".")[0] not in allowed or (
                    isinstance(node, ast.ImportFrom) and node.level
                ):
                    problems.append(
                        f"{where}: import of {name!r} is not allowed "
                        f"(only {', '.join(sorted(allowed))})"
                    )
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            problems.append(f"{where}: dunder attribute {node.attr!r} is not allowed")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            problems.append(f"{where}: {node.id!r} is not allowed (no I/O, no dynamic code)")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            problems.append(f"{where}: global/nonlocal state is not allowed")
    return problems
