"""Sandbox escapes that succeed in Python still reach nothing of the host.

Each technique below is a known way out of a Python-level jail (the `match`
class-pattern walk, `__subclasses__`, frame walks, `str.format` walks and two dozen
more). The first test runs each one with every Python-level layer turned off (no
allowlist, the real builtins, no audit hook: `Limits(python_guards=False)`), checks
that the escape worked (it holds the real `open` and `__import__`), and then shows that
the operating system's confinement (guards/isolation.py: bubblewrap namespaces, a
read-only root of its own, seccomp) still keeps it from `/etc/passwd`, every
`/proc/<pid>` of the host, `$HOME`, the run store, the repository and the network, and
from the system calls that would widen its view. The second test shows that the
allowlist, the first filter, refuses every one of them with a message.
"""

from __future__ import annotations

import asyncio
import os
import platform
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import guardsearch
from guardsearch.guards.code import ALLOWED_IMPORTS, allowlist_problems
from guardsearch.guards.isolation import sandbox_mode
from guardsearch.guards.sandbox import Limits, Sandbox

BARE = Limits(cpu_seconds=5, memory_mb=512, wall_seconds=20.0, python_guards=False,
              allowed=ALLOWED_IMPORTS | {"os", "sys", "socket", "ctypes"})  # fmt: skip
REPO = Path(guardsearch.__file__).resolve().parents[2]

# Each technique defines reach(): the real builtins (a module or its dict), obtained
# its own way. Guards off, each works; the allowlist refuses each.
TECHNIQUES = {
    "match class pattern walk": (
        "from fractions import Fraction\ndef reach():\n"
        "    match Fraction.limit_denominator:\n"
        "        case object(__globals__=g):\n            return g['__builtins__']\n"
    ),
    "__subclasses__ to os._wrap_close": (
        "def reach():\n    for c in ().__class__.__base__.__subclasses__():\n"
        "        if c.__name__ == '_wrap_close':\n"
        "            return c.__init__.__globals__['__builtins__']\n"
    ),
    "__subclasses__ to BuiltinImporter": (
        "def reach():\n    for c in object.__subclasses__():\n"
        "        if c.__name__ == 'BuiltinImporter':\n"
        "            return c.load_module('builtins')\n"
    ),
    "generator frame walk (gi_frame.f_back)": (
        "def reach():\n    def gen():\n        yield me.gi_frame.f_back.f_globals\n"
        "    me = gen()\n    return next(me)['__builtins__']\n"
    ),
    "sys._getframe walk": (
        "import fractions\ndef reach():\n"
        "    return fractions.sys._getframe(0).f_back.f_globals['__builtins__']\n"
    ),
    "traceback frame walk (tb_frame)": (
        "def reach():\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
        "        return e.__traceback__.tb_frame.f_back.f_globals['__builtins__']\n"
    ),
    "sys.exc_info frame walk": (
        "import sys\ndef reach():\n    try:\n        raise KeyError\n    except KeyError:\n"
        "        return sys.exc_info()[2].tb_frame.f_globals['__builtins__']\n"
    ),
    "builtin function __self__": "def reach():\n    return len.__self__\n",
    "function __globals__": "def reach():\n    return reach.__globals__['__builtins__']\n",
    "copyreg through __reduce_ex__": (
        "def reach():\n    return (1).__reduce_ex__(2)[0].__globals__['__builtins__']\n"
    ),
    "getattr by a string": "def reach():\n    return getattr(len, '__self__')\n",
    "operator.attrgetter": (
        "import operator\ndef reach():\n    return operator.attrgetter('__self__')(len)\n"
    ),
    "object.__getattribute__": (
        "def reach():\n    return object.__getattribute__(len, '__self__')\n"
    ),
    "vars() of a module": "def reach():\n    return vars(len.__self__)\n",
    "__import__": "def reach():\n    return __import__('builtins')\n",
    "importlib.import_module": (
        "import importlib\ndef reach():\n    return importlib.import_module('builtins')\n"
    ),
    "fractions.sys.modules": (
        "import fractions\ndef reach():\n    return fractions.sys.modules['builtins']\n"
    ),
    "collections._sys.modules": (
        "import collections\ndef reach():\n    return collections._sys.modules['builtins']\n"
    ),
    "exec of new code": (
        "def reach():\n    box = {}\n    exec('import builtins as b', box)\n    return box['b']\n"
    ),
    "eval": "def reach():\n    return eval(\"__import__('builtins')\")\n",
    "compile + FunctionType": (
        "import types\ndef reach():\n"
        "    code = compile(\"__import__('builtins')\", 'x', 'eval')\n"
        "    return types.FunctionType(code, {'__builtins__': __builtins__})()\n"
    ),
    "pickle.loads of a crafted stream": (
        "import pickle\ndef reach():\n"
        "    return pickle.loads(b'cbuiltins\\n__import__\\n(Vbuiltins\\ntR.')\n"
    ),
    "typing.get_type_hints evaluating a string": (
        "import typing\ndef h(x: \"__import__('builtins')\"):\n    pass\n"
        "def reach():\n    return typing.get_type_hints(h)['x']\n"
    ),
    "gc.get_objects": (
        "import gc\ndef reach():\n    for o in gc.get_objects():\n"
        "        if isinstance(o, dict) and 'open' in o and '__import__' in o and 'len' in o:\n"
        "            return o\n"
    ),
    "gc.get_referrers": (
        "import gc\ndef reach():\n    for o in gc.get_referrers(len):\n"
        "        if isinstance(o, dict) and 'open' in o:\n            return o\n"
    ),
    "inspect.currentframe": (
        "import inspect\ndef reach():\n"
        "    return inspect.currentframe().f_back.f_globals['__builtins__']\n"
    ),
    "ctypes.pythonapi.PyEval_GetBuiltins": (
        "import ctypes\ndef reach():\n"
        "    api = ctypes.pythonapi.PyEval_GetBuiltins\n    api.restype = ctypes.py_object\n"
        "    return api()\n"
    ),
    "functools.partial(getattr)": (
        "import functools\ndef reach():\n    return functools.partial(getattr, len)('__self__')\n"
    ),
}

# What every technique then tries with the real builtins: read files, list folders,
# connect to a listener on this host, fork, raise its limits, and make the system
# calls that would widen its view (x86_64 numbers), each answered or refused.
ATTACK = """
SYSCALLS = {"socket": (41, 2, 1, 0), "mount": (165, 0, 0, 0, 0, 0), "unshare": (272, 0x10000000),
            "ptrace": (101, 16, 1, 0, 0), "chroot": (161, 0), "setns": (308, 0, 0),
            "bpf": (321, 0, 0, 0), "keyctl": (250, 0, 0), "io_uring_setup": (425, 1, 0),
            "open_by_handle_at": (304, 0, 0, 0), "process_vm_readv": (310, 1, 0, 1, 0, 1, 0),
            "clone": (56, 17, 0, 0, 0, 0), "userfaultfd": (323, 0),
            "perf_event_open": (298, 0, 0, -1, -1, 0)}


def attack(paths, folders, port, syscalls):
    b = reach()
    table = b if isinstance(b, dict) else vars(b)
    imp, opn = table["__import__"], table["open"]
    out = {"escaped": opn is imp("io").open and imp("os").getpid() > 0}
    for path in paths:
        try:
            out[path] = opn(path, "rb").read(300).decode("latin-1")
        except BaseException as e:
            out[path] = "refused: " + type(e).__name__
    os = imp("os")
    for folder in folders:
        try:
            out["ls " + folder] = sorted(os.listdir(folder))
        except BaseException as e:
            out["ls " + folder] = "refused: " + type(e).__name__
    try:
        s = imp("socket").socket()
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
        out["socket"] = s.recv(5).decode()
    except BaseException as e:
        out["socket"] = "refused: " + type(e).__name__
    try:
        out["fork"] = os.fork()
        if out["fork"] == 0:
            os._exit(0)
    except BaseException as e:
        out["fork"] = "refused: " + type(e).__name__
    resource = imp("resource")
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (100, 100))
        out["rlimit"] = "raised"
    except BaseException as e:
        out["rlimit"] = "refused: " + type(e).__name__
    if syscalls:
        ctypes = imp("ctypes")
        libc = ctypes.CDLL(None, use_errno=True)
        for name, args in SYSCALLS.items():
            result = libc.syscall(*[ctypes.c_long(a) for a in args])
            out["syscall " + name] = [result, ctypes.get_errno()]
    out["whoami"] = [os.getuid(), os.getpid(), sorted(os.listdir("/"))]
    return out
"""


@pytest.fixture
def canaries(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Secret-looking files where the host keeps things: $HOME, a run store (and the
    folder of the default one), the repository; their paths and contents."""
    secret = f"GS-CANARY-{uuid.uuid4().hex}"
    home = Path.home() / f".gs-sandbox-canary-{uuid.uuid4().hex[:8]}"
    store = tmp_path / "runs.sqlite"
    repo = REPO / f".gs-sandbox-canary-{uuid.uuid4().hex[:8]}"
    made = [home, store, repo]
    for path in made:
        path.write_text(secret)
    try:
        yield {"secret": secret, "home": str(home), "store": str(store), "repo": str(repo)}
    finally:
        for path in made:
            path.unlink(missing_ok=True)


async def _listener() -> tuple[asyncio.Server, int]:
    async def hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(hello, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.skipif(sandbox_mode() != "bwrap", reason="the OS confinement is bubblewrap's")
@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
async def test_an_escape_that_works_in_python_still_reaches_nothing_of_the_host(
    technique: str, canaries: dict[str, str]
) -> None:
    host_pid = os.getpid()
    paths = [
        "/etc/passwd", "/etc/shadow", f"/proc/{host_pid}/cmdline", f"/proc/{host_pid}/environ",
        "/proc/1/cmdline", "/proc/self/status", canaries["home"], str(Path.home() / ".bashrc"),
        canaries["store"], canaries["repo"], str(REPO / "README.md"),
        str(Path(guardsearch.__file__).resolve()),
    ]  # fmt: skip
    folders = ["/proc", str(Path.home()), str(Path(canaries["store"]).parent), str(REPO), "/etc"]
    server, port = await _listener()
    syscalls = platform.machine() == "x86_64"
    async with server, Sandbox(TECHNIQUES[technique] + ATTACK, BARE) as box:
        assert box.loaded.kind == "ok", box.loaded
        out = await box.call("attack", paths, folders, port, syscalls)
    assert out.kind == "ok", out
    seen = out.value
    assert seen["escaped"] is True, f"{technique}: the escape itself failed: {seen}"
    for path in paths + [f"ls {f}" for f in folders]:
        assert str(seen[path]).startswith("refused"), f"{technique} read {path}: {seen[path]}"
    assert canaries["secret"] not in str(seen)
    assert seen["socket"].startswith("refused") and seen["fork"].startswith("refused"), seen
    assert seen["rlimit"].startswith("refused"), seen
    if syscalls:
        refused = {k: v for k, v in seen.items() if k.startswith("syscall ")}
        assert refused and all(v[0] == -1 and v[1] == 1 for v in refused.values()), refused
    uid, pid, root = seen["whoami"]
    assert uid == 65534 and pid <= 3 and set(root) <= {"dev", "lib64", "opt"}, seen["whoami"]


@pytest.mark.skipif(sandbox_mode() != "bwrap", reason="the OS confinement is bubblewrap's")
async def test_a_format_string_walk_reads_only_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """`str.format` looks attributes up by name: text, never a call. Guards off, the
    walk reaches the runner's `os.environ` and `sys.modules`: what it reads is the
    sandbox's, with none of the host's secrets."""
    monkeypatch.setenv("GS_HOST_SECRET", "hunter2-in-the-host")
    source = (
        "import fractions\ndef f(x):\n    fn = fractions.Fraction.limit_denominator\n"
        "    return ['{0.__globals__[sys].modules[os].environ}'.format(fn),"
        " '{0.__globals__[sys].argv}'.format(fn),"
        " '{0.__self__.__dict__[__import__]}'.format(len)]\n"
    )
    async with Sandbox(source, BARE) as box:
        out = await box.call("f", 1)
    assert out.kind == "ok", out
    environ, argv, imp = out.value
    assert "environ" in environ and "hunter2" not in environ and "GS_HOST_SECRET" not in environ
    assert "/opt/runner/sandbox_runner.py" in argv and str(REPO) not in argv
    assert "built-in function __import__" in imp  # the escape reached the real builtins
    assert allowlist_problems(source) != []


@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
def test_the_allowlist_refuses_each_escape_with_a_message(technique: str) -> None:
    problems = allowlist_problems(TECHNIQUES[technique])
    assert problems and all(p.startswith("line ") for p in problems), problems


def test_there_are_enough_techniques() -> None:
    # the issue asks for the four named walks and at least 20 other techniques
    assert len(TECHNIQUES) >= 24
