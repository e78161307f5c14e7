"""Code the model writes: read one Python module out of its answer and vet it by its AST.

`parse_module` takes the model's text (bare code or a ``` fence), keeps the
definitions (functions, classes, imports, constants) and drops what would run on
import (`if __name__ == "__main__":` blocks, example calls and loops, `x = f(...)` with
one of its own functions), and checks that the requested
functions are there. `allowlist_problems` lists what the module may not do: import
beyond `ALLOWED_IMPORTS`, touch a dunder attribute or a frame (`FRAME_ATTRIBUTES`),
reach past an allowed module (its private names, or a module it imported that is not
allowed: `fractions.sys`), or name `open`, `exec`, `eval`, `__import__`, operator's
`attrgetter`/`methodcaller` and the other ways out (`FORBIDDEN_NAMES`, as a name, an
attribute or an imported name), also where a `match` class pattern or a format string
reads an attribute by its name. Both raise or return
feedback the model can act on; neither runs any of the code (guards/sandbox.py does).
"""

from __future__ import annotations

import ast
import importlib
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass

from guardsearch.core.errors import ParseError

ALLOWED_IMPORTS = frozenset(
    {"itertools", "math", "fractions", "functools", "collections", "operator"}
)
FORBIDDEN_NAMES = frozenset(
    {
        "open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars",
        "getattr", "setattr", "delattr", "input", "breakpoint", "memoryview", "help",
        "exit", "quit", "__builtins__", "__loader__", "__spec__",
        # operator's ways to reach an attribute or method by a string (`__class__`)
        "attrgetter", "methodcaller",
    }
)  # fmt: skip
# What a refused import was for, where the sandbox does it already (the 1.5B imported
# copy to copy a state before changing it).
NOT_NEEDED = {
    "copy": "; no copy is needed: the arguments each call of your functions gets are "
    "its own (immutable tuples, or lists copied for that call), so no other call sees "
    "a change to them",
}
# A frame or a code object: a running generator's gi_frame.f_back leads to the caller's
# frame, and the sandbox runner's globals (f_globals) hold `os`.
FRAME_ATTRIBUTES = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await",
        "ag_frame", "ag_code", "ag_await", "f_back", "f_globals", "f_locals",
        "f_builtins", "f_code", "tb_frame", "tb_next",
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


_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS_ONLY = (ast.Import, ast.ImportFrom, ast.Pass, ast.Assign)  # `try: import x ...`


def _keep(node: ast.stmt, defined: frozenset[str]) -> bool:
    """Definitions stay: imports, functions, classes, constants and the docstring.
    What runs on import goes: main blocks, example calls, loops over examples, and
    assignments that call one of the module's own functions (`result = f(example)`);
    a `try` stays only when it guards imports."""
    if isinstance(node, _DEFINITIONS):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Assign | ast.AnnAssign):
        return not any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defined
            for n in ast.walk(node)
        )
    if isinstance(node, ast.Try):
        inner = [*node.body, *node.orelse, *node.finalbody,
                 *(s for h in node.handlers for s in h.body)]  # fmt: skip
        return all(isinstance(s, _IMPORTS_ONLY) for s in inner)
    return False


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
    own = frozenset(n.name for n in tree.body if isinstance(n, _DEFINITIONS[2:]))
    tree.body = [n for n in tree.body if _keep(n, own)]
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    missing = [name for name in required if name not in defined]
    if missing:
        raise ParseError(
            f"the code does not define {', '.join(f'{m}()' for m in missing)}; "
            f"define it at the top level (found: {', '.join(defined) or 'no functions'})"
        )
    return CodeModule(source=ast.unparse(tree), functions=tuple(defined))


def _module_reach(module: str, name: str, allowed: frozenset[str]) -> str | None:
    """Why `module.name` is refused (None: it is not): a private name, or a module
    outside the allowlist (`fractions.sys` reaches `sys.modules`, and from there `os`)."""
    if name.startswith("_"):
        return f"{module}.{name} is private to {module}"
    try:
        value = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] not in allowed:
        return f"{module}.{name} is the module {value.__name__!r}, which is not allowed"
    return None


def allowlist_problems(source: str, allowed: frozenset[str] = ALLOWED_IMPORTS) -> list[str]:
    """What in `source` the sandbox's rules forbid (empty: nothing), each with its line."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"the code does not parse: {exc.msg}"]
    problems: list[str] = []
    modules: dict[str, str] = {}  # a name the code binds to an allowed module: which one
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound = a.asname or a.name.split(".")[0]  # `import a.b` binds `a`
                if a.name.split(".")[0] in allowed:
                    modules[bound] = a.name if a.asname else bound
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or "."]
            )
            if isinstance(node, ast.ImportFrom):
                problems += [
                    f"{where}: {a.name!r} is not allowed (no I/O, no dynamic code)"
                    for a in node.names
                    if a.name in FORBIDDEN_NAMES
                ]
            for name in names:
                if name.split(".")[0] not in allowed or (
                    isinstance(node, ast.ImportFrom) and node.level
                ):
                    problems.append(
                        f"{where}: import of {name!r} is not allowed "
                        f"(only {', '.join(sorted(allowed))})" + NOT_NEEDED.get(name, "")
                    )
                elif isinstance(node, ast.ImportFrom):
                    problems += [
                        f"{where}: {why}"
                        for a in node.names
                        if a.name not in FORBIDDEN_NAMES
                        and (why := _module_reach(name, a.name, allowed))
                    ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            problems.append(f"{where}: dunder attribute {node.attr!r} is not allowed")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            problems.append(f"{where}: {node.attr!r} is not allowed (no I/O, no dynamic code)")
        elif isinstance(node, ast.Attribute) and node.attr in FRAME_ATTRIBUTES:
            problems.append(f"{where}: {node.attr!r} is not allowed (no frames or code objects)")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and (why := _module_reach(modules[node.value.id], node.attr, allowed))
        ):
            problems.append(f"{where}: {why}")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            problems.append(f"{where}: {node.id!r} is not allowed (no I/O, no dynamic code)")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            problems.append(f"{where}: global/nonlocal state is not allowed")
        elif isinstance(node, ast.MatchClass):
            problems += [f"{where}: {why}" for a in node.kwd_attrs if (why := _attribute(a))]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _FORMAT_REACH.search(node.value)
        ):
            problems.append(
                f"{where}: a format string may not read a private attribute ({{x._name}})"
            )
    return problems


# A format field that reads a private or dunder attribute: `'{0.__globals__}'.format(f)`.
_FORMAT_REACH = re.compile(r"\{[^{}]*\._")


def _attribute(name: str) -> str | None:
    """Why a class pattern may not read attribute `name` (`case object(__globals__=g)`
    reads it by a string, past the checks of `ast.Attribute`), or None."""
    if name.startswith("_"):
        return f"a class pattern may not read {name!r} (no dunder or private attributes)"
    if name in FORBIDDEN_NAMES or name in FRAME_ATTRIBUTES:
        return f"a class pattern may not read {name!r} (no frames, no dynamic code)"
    return None
