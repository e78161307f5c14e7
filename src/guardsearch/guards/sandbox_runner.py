"""The sandbox's child process: run model-written functions on given inputs, line by line.

Run as a script (`python -I -S sandbox_runner.py CPU_SECONDS MEMORY_BYTES ALLOWED
MODE GUARDS`) by guards/sandbox.py, never imported by the package: it imports only the
standard library. MODE `bwrap`: bubblewrap has confined it already (guards/isolation.py);
`process`: before reading any code it moves into a network namespace of its own (no
network; where the kernel allows it) and drops root (to nobody). Then it sets its
limits: CPU time, address space, no new processes, no file writes. GUARDS `bare` turns
the Python-level layers below off (tests of the OS confinement only). The module's
builtins have no `open`, `exec`, `eval`, `compile`, `input`, and an `__import__` that
admits only the allowed modules; `print` prints nothing.

Protocol (JSON Lines on stdin/stdout): the first line is `{"source": ...}`, answered by
`{"ok": true, "value": {"network": "cut"|"open"}}` or `{"ok": false, "error": ...}`;
then each line `{"fn": name, "args": [...]}` is answered by `{"ok": true, "value":
...}` or `{"ok": false, "error": ...}`.
JSON arrays arrive as tuples (as lists when the first line says `"mutable": true`: then
every call of a function the module defines, its calls to its own functions included,
gets a deep copy of its arguments, so code may change a state in place), `{"$q": [n,
d]}` is a Fraction; results travel back the
same way (`{"$repr": ...}` for a value JSON cannot carry); a generator (or map, filter,
zip, range) travels as the list of what it yields, so a function that yields its
results is judged by them.
"""

import builtins
import contextlib
import copy
import importlib
import json
import math
import os
import resource
import sys
import types
from fractions import Fraction
from typing import Any

MAX_LINE = 2_000_000
NOBODY = 65534
BANNED = (
    "open", "exec", "eval", "compile", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "input", "breakpoint", "memoryview", "help", "exit", "quit",
)  # fmt: skip


LAZY = (types.GeneratorType, map, filter, zip, range)


def decode(value: Any, mutable: bool = False) -> Any:
    if isinstance(value, list):
        items = [decode(v, mutable) for v in value]
        return items if mutable else tuple(items)
    if isinstance(value, dict):
        if "$q" in value:
            n, d = value["$q"]
            return Fraction(n, d)
        return {k: decode(v, mutable) for k, v in value.items()}
    return value


def copying(fn: Any) -> Any:
    """`fn`, called with deep copies of its arguments: a change the code makes to a
    state it was given stays inside that call (successors calling move on one state
    for every move sees the state unchanged each time)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*copy.deepcopy(args), **copy.deepcopy(kwargs))

    call.__name__ = fn.__name__
    return call


def encode(value: Any, depth: int = 0) -> Any:
    if depth > 50:
        return {"$repr": "<nested too deep>"}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**300 else {"$repr": "<huge integer>"}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$repr": repr(value)}
    if isinstance(value, Fraction):
        return {"$q": [value.numerator, value.denominator]}
    if isinstance(value, list | tuple | set | frozenset):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, LAZY):  # `yield` or map(...): what it yields, as a list
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: encode(v, depth + 1) for k, v in value.items()}
    return {"$repr": repr(value)[:200]}


CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


def unshare(flags: int) -> bool:
    """`unshare(2)` through libc: True when the process is now in the new namespaces."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).unshare(flags) == 0)
    except (OSError, AttributeError):
        return False


def confine(cpu_seconds: int, memory_bytes: int, isolated: bool = False) -> bool:
    """Cut the network, drop root, then cap CPU time, memory, processes and file writes.

    No network: a new network namespace has no interface but a loopback that is down,
    so no socket reaches anything, here or outside. Root enters one directly; a user
    (or root that may not, in a container) enters one inside a new user namespace,
    after root is dropped (its uid there is unmapped: nothing to drop any more). Returns
    whether the network is cut: False where the kernel refuses both (not Linux, user
    namespaces turned off, a seccomp filter), and then only the allowlist stands
    between the code and the network (docs/security.md)."""
    if isolated:  # bubblewrap did it: nobody, no network, no capabilities, seccomp
        cut = True
    else:
        cut = os.getuid() == 0 and unshare(CLONE_NEWNET)
        if os.getuid() == 0:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        cut = cut or unshare(CLONE_NEWUSER | CLONE_NEWNET)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return cut


def view(module: types.ModuleType, allowed: frozenset[str], seen: dict[str, Any]) -> Any:
    """What generated code sees of an allowed module: its public names, less any module
    outside the allowlist. The module itself would hand out more: `fractions.sys` (and
    `collections._sys`) reach `sys.modules`, and from there `os`."""
    if module.__name__ in seen:
        return seen[module.__name__]
    out = seen[module.__name__] = types.ModuleType(module.__name__, module.__doc__)
    for key, value in vars(module).items():
        if key.startswith("_"):
            continue
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] not in allowed:
                continue
            value = view(value, allowed, seen)
        setattr(out, key, value)
    return out


# The audit event (PEP 578) CPython raises when code reaches a frame or a code object:
# gi_frame, tb_frame, f_code, __code__. A frame's f_back leads to this runner's globals,
# and they hold `os`. The allowlist refuses those names too; this hook is the layer
# behind it. (A hook is no sandbox on its own; the process limits stay the last layer.)
def refuse_frames(event: str, args: tuple[Any, ...]) -> None:
    if event == "object.__getattr__":
        raise PermissionError(f"the sandbox refuses access to {args[1]!r}")


def safe_builtins(allowed: frozenset[str]) -> dict[str, Any]:
    def guarded_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level or name.split(".")[0] not in allowed:
            raise ImportError(f"import of {name!r} is not allowed")
        module = importlib.import_module(name)
        top = module if fromlist else sys.modules[name.split(".")[0]]
        return view(top, allowed, {})

    table = {k: v for k, v in vars(builtins).items() if k not in BANNED}
    table["__import__"] = guarded_import
    table["print"] = lambda *args, **kwargs: None
    return table


def reply(message: dict[str, Any]) -> None:
    line = json.dumps(message)
    if len(line) > MAX_LINE:
        line = json.dumps({"ok": False, "error": f"OutputTooLarge: {len(line)} bytes of result"})
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def main() -> None:
    cpu_seconds, memory_bytes = int(sys.argv[1]), int(sys.argv[2])
    allowed = frozenset(sys.argv[3].split(",")) if len(sys.argv) > 3 else frozenset()
    isolated = len(sys.argv) > 4 and sys.argv[4] == "bwrap"
    guards = not (len(sys.argv) > 5 and sys.argv[5] == "bare")
    for name in sorted(allowed):  # load before the limits: imports need files and memory
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    stdin, stdout = sys.stdin, sys.stdout
    network = "cut" if confine(cpu_seconds, memory_bytes, isolated) else "open"
    first = stdin.readline()
    if not first:
        return
    table = safe_builtins(allowed) if guards else vars(builtins)
    namespace: dict[str, Any] = {"__builtins__": table, "__name__": "generated"}
    header = json.loads(first)
    mutable = bool(header.get("mutable"))
    if guards:
        sys.addaudithook(refuse_frames)  # from here on, the generated code runs
    try:
        exec(compile(header["source"], "<generated>", "exec"), namespace)
    except BaseException as exc:  # the module itself fails to load: say why, stop
        reply({"ok": False, "error": error_text(exc)})
        return
    if mutable:
        for name, value in list(namespace.items()):
            if isinstance(value, types.FunctionType) and value.__module__ == "generated":
                namespace[name] = copying(value)
    reply({"ok": True, "value": {"network": network}})
    for line in stdin:
        request = json.loads(line)
        fn = namespace.get(request["fn"])
        if not callable(fn):
            reply({"ok": False, "error": f"NameError: {request['fn']} is not defined"})
            continue
        try:
            value = fn(*decode(request["args"], mutable))
            reply({"ok": True, "value": encode(value)})
        except RecursionError as exc:
            reply({"ok": False, "error": error_text(exc)})
        except MemoryError:
            reply({"ok": False, "error": "MemoryError: ran out of memory"})
        except Exception as exc:
            reply({"ok": False, "error": error_text(exc)})
    stdout.flush()


if __name__ == "__main__":
    main()
