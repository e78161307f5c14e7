"""The sandbox: forbidden code is refused before it runs, and what slips through is
confined by the child process (no files, no processes, no secrets, CPU/memory/wall)."""

from __future__ import annotations

import asyncio
from fractions import Fraction

import pytest

from guardsearch.core.errors import ConfigError, ParseError
from guardsearch.guards.code import ALLOWED_IMPORTS, allowlist_problems, parse_module
from guardsearch.guards.code_tests import Case, case_failure, run_cases
from guardsearch.guards.sandbox import Limits, Sandbox

FAST = Limits(cpu_seconds=2, memory_mb=256, wall_seconds=4.0)
# The process-level tests let `os`/`time` in past the allowlist on purpose: they show
# what the child process itself stops when code gets that far.
LOOSE = Limits(cpu_seconds=2, memory_mb=256, wall_seconds=4.0,
               allowed=ALLOWED_IMPORTS | {"os", "time"})  # fmt: skip
# Generated code that walks from a running generator's frame to the sandbox runner's
# globals, which hold `os`: the allowlist refuses it, and so does the child at run time.
ESCAPE_BY_FRAME = (
    "    def gen():\n        yield me.gi_frame.f_back.f_back.f_globals['os'].getcwd()\n"
    "    me = gen()\n    return next(me)"
)


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("import os\ndef f(x):\n    return os.listdir('.')", "import of 'os'"),
        ("import subprocess\ndef f(x):\n    return 1", "import of 'subprocess'"),
        ("import copy\ndef f(x):\n    return copy.deepcopy(x)", "no copy is needed"),
        ("from os import path\ndef f(x):\n    return 1", "import of 'os'"),
        ("def f(x):\n    return open('/etc/passwd').read()", "'open' is not allowed"),
        ("def f(x):\n    return eval('1')", "'eval' is not allowed"),
        ("def f(x):\n    return __import__('os')", "'__import__' is not allowed"),
        ("def f(x):\n    return x.__class__.__bases__", "dunder attribute"),
        ("from operator import attrgetter\ndef f(x):\n    return 1", "'attrgetter'"),
        ("import operator\ndef f(x):\n    return operator.methodcaller('x')(x)", "'methodcaller'"),
        # an allowed module's way to another module: fractions.sys reaches sys.modules
        ("import fractions\ndef f(x):\n    return fractions.sys.modules", "module 'sys'"),
        ("import fractions as q\ndef f(x):\n    return q.sys", "module 'sys'"),
        ("from fractions import sys\ndef f(x):\n    return 1", "module 'sys'"),
        ("import collections\ndef f(x):\n    return collections._sys", "private"),
        ("from collections import _sys\ndef f(x):\n    return 1", "private"),
        # a running generator's frame leads to the caller's, and on to the runner's globals
        (f"def f(x):\n{ESCAPE_BY_FRAME}", "'gi_frame' is not allowed"),
        ("def f(x):\n    return x.tb_frame.f_globals", "'f_globals' is not allowed"),
    ],
)
def test_the_allowlist_names_what_it_refuses(source: str, why: str) -> None:
    problems = allowlist_problems(source)
    assert any(why in p for p in problems), problems


def test_allowed_imports_pass_the_allowlist() -> None:
    source = (
        "import itertools\nfrom fractions import Fraction\nimport math\n"
        "from operator import add, truediv\nimport collections.abc as cabc\n"
        "import collections.abc\nimport math as m\ndef f(x):\n"
        "    return collections.abc.Iterable, cabc.Sized, m.sqrt(x), collections.deque"
    )
    assert allowlist_problems(source) == []


def test_parse_keeps_definitions_and_drops_what_runs_on_import() -> None:
    text = (
        "Here you go:\n```python\ndef is_goal(s):\n    return len(s) == 1\n\n"
        "print(is_goal((1,)))\nif __name__ == '__main__':\n    is_goal((2,))\n```\nDone."
    )
    module = parse_module(text, ["is_goal"])
    assert "print" not in module.source and "__main__" not in module.source
    assert module.functions == ("is_goal",)
    with pytest.raises(ParseError, match=r"does not define successors\(\)"):
        parse_module(text, ["successors"])
    with pytest.raises(ParseError, match="does not parse"):
        parse_module("def f(:\n  pass", ["f"])


def test_parse_drops_example_usage_that_would_run_on_import() -> None:
    # Seen on the 1.5B: an example loop after the function made the module fail to load,
    # so the verdict named the example, not the function.
    text = (
        "```python\nfrom fractions import Fraction\nOPS = ['+', '-']\n"
        "try:\n    import math\nexcept ImportError:\n    math = None\n\n"
        "def successors(state):\n    return [state[1:]]\n\n"
        "# Example usage\nstate = (Fraction(2), Fraction(3))\nresult = successors(state)\n"
        "for s in successors(state):\n    print(s)\nwhile False:\n    pass\n"
        "try:\n    successors(state)\nexcept Exception:\n    pass\n```"
    )
    source = parse_module(text, ["successors"]).source
    assert "OPS = " in source and "import math" in source and "state = (" in source
    assert "result =" not in source and "for s in" not in source and "while" not in source
    assert source.count("successors(") == 1  # the definition only


async def _one(source: str, fn: str = "f", limits: Limits = LOOSE) -> object:
    async with Sandbox(source, limits) as box:
        return await box.call(fn, 1)


async def test_sleeping_forever_is_killed_as_a_hang() -> None:
    out = await _one("import time\ndef f(x):\n    time.sleep(1000)")
    assert out.kind == "hang" and "killed" in out.error


async def test_a_busy_loop_is_killed_as_a_hang() -> None:
    out = await _one("def f(x):\n    while True:\n        x += 1")
    assert out.kind == "hang"


async def test_unbounded_allocation_runs_out_of_memory() -> None:
    out = await _one("def f(x):\n    a = []\n    while True:\n        a.append(bytearray(10**7))")
    assert out.kind in ("exception", "crash") and "memory" in out.error.lower()


async def test_fork_is_refused_by_the_process_limits() -> None:
    out = await _one("import os\ndef f(x):\n    return os.fork()")
    assert out.kind == "exception" and ("BlockingIOError" in out.error or "Permission" in out.error)


async def test_files_cannot_be_opened_or_written() -> None:
    out = await _one("def f(x):\n    return open('/etc/hostname').read()")
    assert out.kind == "exception" and "NameError" in out.error
    out = await _one(
        "import os\ndef f(x):\n    return os.open('leak.txt', os.O_CREAT | os.O_WRONLY)"
    )
    assert out.kind == "exception"


async def test_the_child_inherits_no_environment_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GS_TEST_SECRET", "hunter2")
    out = await _one("import os\ndef f(x):\n    return sorted(os.environ)")
    assert out.kind == "ok" and "GS_TEST_SECRET" not in out.value


async def test_imports_outside_the_allowlist_fail_at_run_time_too() -> None:
    out = await _one("def f(x):\n    import subprocess\n    return 1", limits=FAST)
    assert out.kind == "exception" and "not allowed" in out.error


async def test_allowed_modules_show_the_code_no_other_module_at_run_time_too() -> None:
    # Past the allowlist (Sandbox alone does not vet), the child hands out views of the
    # allowed modules: their public names, less any module outside the allowlist.
    out = await _one("import fractions\ndef f(x):\n    return fractions.sys.modules", limits=FAST)
    assert out.kind == "exception" and "has no attribute 'sys'" in out.error, out
    out = await _one("import collections\ndef f(x):\n    return collections._sys", limits=FAST)
    assert out.kind == "exception" and "has no attribute '_sys'" in out.error, out
    out = await _one("from fractions import sys\ndef f(x):\n    return 1", limits=FAST)
    assert out.kind == "exception" and "cannot import name 'sys'" in out.error, out
    works = (
        "import collections.abc, fractions\nfrom fractions import Fraction\n"
        "from collections import deque\ndef f(x):\n"
        "    return [isinstance([], collections.abc.Iterable),"
        " fractions.Fraction(1, 3) + Fraction(1, 6), fractions.math.floor(2.5), len(deque([x]))]"
    )
    out = await _one(works, limits=FAST)
    assert out.kind == "ok" and out.value == [True, Fraction(1, 2), 2, 1], out


async def test_frames_are_refused_at_run_time_too() -> None:
    out = await _one(f"def f(x):\n{ESCAPE_BY_FRAME}", limits=FAST)
    assert out.kind == "exception" and "refuses access to 'gi_frame'" in out.error, out
    out = await _one("def f(x):\n    return f.__code__", limits=FAST)
    assert out.kind == "exception" and "'__code__'" in out.error, out
    # a format string reaches attributes by name, past any AST check; the hook still sees it
    by_format = "def f(x):\n    g = (i for i in [1])\n    return '{0.gi_frame.f_back}'.format(g)"
    out = await _one(by_format, limits=FAST)
    assert allowlist_problems(by_format) == [] and "'gi_frame'" in out.error, out
    namedtuple = (  # what the stdlib does with frames itself still works (sys._getframe)
        "from collections import namedtuple\nP = namedtuple('P', 'a b')\n"
        "def f(x):\n    return list(P(1, x))"
    )
    assert (await _one(namedtuple, limits=FAST)).value == [1, 1]


async def test_verdicts_name_the_input_what_was_expected_and_what_came_back() -> None:
    cases = [Case("double", (3,), lambda got: None if got == 6 else "wrong", "6")]
    wrong = await run_cases("def double(x):\n    return x + 1", cases, FAST)
    assert wrong.guard.endswith("wrong answer")
    assert "double(3) returned 4" in wrong.feedback and "expected 6" in wrong.feedback
    raised = await run_cases("def double(x):\n    return x / 0", cases, FAST)
    assert raised.guard.endswith("exception") and "ZeroDivisionError" in raised.feedback
    hung = await run_cases("def double(x):\n    while True:\n        pass", cases, FAST)
    assert hung.guard.endswith("hang") and "did not finish" in hung.feedback
    forbidden = await run_cases("import os\ndef double(x):\n    return 6", cases, FAST)
    assert forbidden.guard.endswith("forbidden") and not forbidden.passed
    assert (await run_cases("def double(x):\n    return 2 * x", cases, FAST)).passed


async def test_a_function_that_yields_is_judged_by_what_it_yields() -> None:
    cases = [Case("halves", (4,), lambda got: None if list(got) == [2, 1] else "wrong", "[2, 1]")]
    yields = "def halves(x):\n    yield x // 2\n    yield x // 4"
    assert (await run_cases(yields, cases, FAST)).passed
    mapped = "def halves(x):\n    return map(lambda d: x // d, (2, 4))"
    assert (await run_cases(mapped, cases, FAST)).passed


async def test_generated_code_reaches_no_network_not_even_this_host() -> None:
    async def hello(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(hello, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    source = (
        "import socket\ndef f(x):\n"
        "    s = socket.socket()\n"
        "    s.settimeout(2)\n"
        f"    s.connect((b'127.0.0.1', {port}))\n"  # bytes: no codec lookup for the host
        "    return s.recv(5).decode()"
    )
    limits = Limits(cpu_seconds=2, memory_mb=256, wall_seconds=6.0,
                    allowed=ALLOWED_IMPORTS | {"socket"})  # fmt: skip
    async with server, Sandbox(source, limits) as box:
        if not box.network_cut:  # documented: then only the allowlist keeps sockets out
            pytest.skip("this kernel gives the sandbox no network namespace")
        out = await box.call("f", 1)
    assert out.kind == "exception" and "hello" not in str(out.value), out
    # seccomp refuses socket() itself (EPERM); in process mode the namespace is unreachable
    assert any(w in out.error for w in ("OSError", "PermissionError", "nreachable")), out


def test_without_bubblewrap_the_sandbox_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """No silent weaker mode: without bwrap a sandbox is refused with what to do,
    unless the user opts in to process limits only (GUARDSEARCH_SANDBOX=process)."""
    from guardsearch.guards import isolation

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv(isolation.SANDBOX_ENV, raising=False)
    for cached in (isolation._bwrap_base, isolation.check_bwrap):
        cached.cache_clear()
    try:
        with pytest.raises(isolation.IsolationUnavailable, match=r"bubblewrap.*not found") as err:
            asyncio.run(Sandbox("def f(x):\n    return x", FAST).start())
        assert "GUARDSEARCH_SANDBOX=process" in str(err.value)
        with pytest.raises(isolation.IsolationUnavailable):
            isolation.ensure_isolation()
        asyncio.run(_solve_is_503())
        monkeypatch.setenv(isolation.SANDBOX_ENV, "process")
        assert isolation.ensure_isolation() == "process"
        monkeypatch.setenv(isolation.SANDBOX_ENV, "none")
        with pytest.raises(ConfigError, match="must be one of bwrap, process"):
            isolation.sandbox_mode()
    finally:
        for cached in (isolation._bwrap_base, isolation.check_bwrap):
            cached.cache_clear()


async def test_a_malformed_reply_is_a_verdict_never_an_exception_here() -> None:
    from guardsearch.guards.sandbox import parse_reply

    for raw, why in [
        (b'{"ok": true, "value": {"$q": [1, 0]}}', "not a fraction"),
        (b'{"ok": true, "value": {"$q": "x"}}', "not a fraction"),
        (b'{"ok": true, "value": {"$q": [1.5, 2]}}', "not a fraction"),
        (b"not json", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"ok": true, "value": ' + b"[" * 300 + b"]" * 300 + b"}", "nested too deeply"),
    ]:
        out = parse_reply(raw)
        assert out.kind == "bad_output" and why in out.error, (raw[:40], out)
    # a child that writes its own reply (past the Python layers) gets a verdict too
    source = (
        "import sys\ndef f(x):\n"
        '    sys.stdout.write(\'{"ok": true, "value": {"$q": [1, 0]}}\\n\')\n'
        "    sys.stdout.flush()\n    return 1\n"
    )
    loose = Limits(cpu_seconds=2, memory_mb=256, wall_seconds=4.0, python_guards=False,
                   allowed=ALLOWED_IMPORTS | {"sys"})  # fmt: skip
    async with Sandbox(source, loose) as box:
        out = await box.call("f", 1)
    assert out.kind == "bad_output" and "not a fraction" in out.error, out
    failure = case_failure(Case("f", (1,), lambda got: None, "1"), out)
    assert failure is not None and failure[0] == "bad_output", failure


async def _solve_is_503() -> None:
    """Over HTTP, a server that cannot confine the sandbox says so: 503, not a 400."""
    import httpx

    from guardsearch import ScriptedModel
    from guardsearch.server import create_app

    app = create_app(model=ScriptedModel(["x"], repeat_last=True), providers=[])
    body = {"app": "game24", "problem": {"numbers": "4 5 6 10"}, "strategy": "program"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        answer = await c.post("/solve", json=body)
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["type"] == "unavailable"
    assert "GUARDSEARCH_SANDBOX=process" in answer.json()["error"]["message"]
