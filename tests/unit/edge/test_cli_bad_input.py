"""The CLI bad-input table: every command given bad input, as a careless user or an
attacker would. Each case must end with exit 2 (usage) or 1 (the run failed), one line
on stderr that starts with `error:`, and no traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardsearch.cli import app

runner = CliRunner()
SOLVING = ['{"steps": ["5 * 6"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}']


@dataclass(frozen=True)
class Case:
    """One command line: `{NAME}` in args and env is a path from the `place` fixture."""

    args: tuple[str, ...]
    code: int = 2
    env: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        env = " ".join(f"{k}={v}" for k, v in self.env.items())
        return f"{env} {' '.join(self.args)}".strip()


def case(*args: str, code: int = 2, **env: str) -> Case:
    return Case(args=args, code=code, env=env)


M = ("--model", "scripted:{answers}")
BIG = "9" * 5000

CASES = [
    # -- the root and unknown commands
    case("nope"),
    case("--nope"),
    case("solve", "nope"),
    case("runs", "nope"),
    case("apps", "--nope"),
    # -- ask
    case("ask", "", *M),
    case("ask", "   ", *M),
    case("ask", "x", "--schema", "{binary}", *M),
    case("ask", "x", "--schema", "{folder}", *M),
    case("ask", "x", "--schema", "{missing}", *M),
    case("ask", "x", "--schema", "{list_json}", *M),
    case("ask", "x", "--schema", "{not_json}", *M),
    case("ask", "x", "--rmax", "0", *M),
    case("ask", "x", "--max-tokens", "0", *M),
    case("ask", "x", "--max-tokens", "1e99", *M),
    case("ask", "x", "--budget-calls", "-1", *M),
    case("ask", "x", "--trace", "{folder}", *M),
    case("ask", "x", "--model", "nope:x"),
    case("ask", "x", "--model", "scripted:{binary}"),
    case("ask", "x", GUARDSEARCH_MODEL="nope"),
    # -- models
    case("models", GUARDSEARCH_LLAMA_EXTRA_BUFTS="maybe"),
    case("models", "--json", GUARDSEARCH_LLAMA_EXTRA_BUFTS="sometimes"),
    # -- solve game24: numbers
    case("solve", "game24", "1e5000 1 1 1", *M),
    case("solve", "game24", "1e10000000 1 1 1", *M),
    case("solve", "game24", "1e-5000 1 1 1", *M),
    case("solve", "game24", f"{BIG} 1 1 1", *M),
    case("solve", "game24", "4", *M),
    case("solve", "game24", " ".join(str(n) for n in range(1, 21)), *M),
    case("solve", "game24", "1 " * 10_000, *M),
    case("solve", "game24", "", *M),
    case("solve", "game24", "a b c d", *M),
    case("solve", "game24", "1/0 2 3 4", *M),
    case("solve", "game24", "nan 2 3 4", *M),
    case("solve", "game24", "inf 2 3 4", *M),
    case("solve", "game24", "1_000 1 1 1", *M),
    case("solve", "game24", "٤ 5 6 10", *M),
    case("solve", "game24", "4 5 6 10\x00", *M),
    case("solve", "game24", "-x 5 6 10", *M),
    case("solve", "game24", *M),
    case("solve", "game24", "4 5 6 10", "extra", *M),
    # -- solve game24: options
    case("solve", "game24", "4 5 6 10", "--strategy", "nope", *M),
    case("solve", "game24", "4 5 6 10", "--strategy", "", *M),
    case("solve", "game24", "4 5 6 10", "--budget-calls", "0", *M),
    case("solve", "game24", "4 5 6 10", "--budget-calls", "1e5", *M),
    case("solve", "game24", "4 5 6 10", "--budget-calls", BIG, *M),
    case("solve", "game24", "4 5 6 10", "--budget-tokens", "0", *M),
    case("solve", "game24", "4 5 6 10", "--seconds", "-1", *M),
    case("solve", "game24", "4 5 6 10", "--seconds", "nan", *M),
    case("solve", "game24", "4 5 6 10", "--temperature", "nan", *M),
    case("solve", "game24", "4 5 6 10", "--temperature", "-1", *M),
    case("solve", "game24", "4 5 6 10", "--temperature", "1e308", *M),
    case("solve", "game24", "4 5 6 10", "--width", "0", *M),
    case("solve", "game24", "4 5 6 10", "--samples", "0", *M),
    case("solve", "game24", "4 5 6 10", "--concurrency", "0", *M),
    case("solve", "game24", "4 5 6 10", "--widht", "3", *M),
    case("solve", "game24", "4 5 6 10", "--trace", "{folder}", *M),
    case("solve", "game24", "4 5 6 10", "--model", "nope:xx"),
    case("solve", "game24", "4 5 6 10", "--model", "scripted:{missing}"),
    case("solve", "game24", "4 5 6 10", "--model", "replay:{binary}"),
    case("solve", "game24", "4 5 6 10", "--locked", *M),
    # -- solve game24 --durable: the same checks, and the store
    case("solve", "game24", "4", "--durable", "--store", "{store}", *M),
    case("solve", "game24", "1 2 3 4 5 6 7", "--durable", "--store", "{store}", *M),
    case("solve", "game24", "1e5000 1 1 1", "--durable", "--store", "{store}", *M),
    case("solve", "game24", "4 5 6 10", "--durable", "--store", "{garbage_db}", *M),
    case("solve", "game24", "4 5 6 10", "--durable", "--store", "/proc/version", *M),
    case("solve", "game24", "4 5 6 10", "--durable", "--store", "{folder}", *M),
    case("solve", "game24", "4 5 6 10", "--durable", *M, GUARDSEARCH_HOME="{a_file}"),
    # -- plan
    case("plan", "--problem-file", "{binary}", *M),
    case("plan", "--problem-file", "{missing}", *M),
    case("plan", "--problem-file", "{folder}", *M),
    case("plan", "--problem-file", "{not_json}", *M),
    case("plan", "--problem", "nope", *M),
    case("plan", "--problem", "x", "--problem-file", "{a_file}", *M),
    case("plan", "--pipeline", "nope", "--problem", "bug-login-empty-password", *M),
    case("plan", "--guard-level", "nope", "--problem", "bug-login-empty-password", *M),
    case("plan", "", *M),
    case("plan", "x", "--budget-calls", "0", *M),
    case("plan", "x", "--temperature", "9", *M),
    case("plan", "x", "--trace", "{folder}", *M),
    # -- research
    case("research", "", *M),
    case("research", "  ", *M),
    case("research", "x", "--tier", "nope", *M),
    case("research", "x", "--search", "nope:zz", *M),
    case("research", "x", "--max-iters", "0", *M),
    case("research", "x", "--max-time", "-5", *M),
    case("research", "x", "--token-budget", "1e5000", *M),
    case("research", "x", "--support", "magic", *M),
    case("research", "x", *M, RESEARCH_MAX_ITERS="abc"),
    case("research", "x", *M, RESEARCH_MAX_ITERS="1e5000"),
    case("research", "x", *M, RESEARCH_TOKEN_BUDGET="-5"),
    case("research", "x", *M, RESEARCH_MAX_EXECUTION_TIME_S="nan"),
    case("research", "x", *M, GUARDSEARCH_HOME="{a_file}"),
    # -- find and probe
    case("find", "", *M),
    case("find", "x", "--min", "0", *M),
    case("find", "x", "--history", "{folder}", *M),
    case("find", "x", "--history", "{binary}", *M),
    case("find", "x", "--transcript", "{folder}", *M),
    case("probe", "", *M),
    case("probe", "x", "--timeline", "{folder}", *M),
    case("probe", "x", "--outer-calls", "0", *M),
    # -- corpus
    case("corpus", "list", GUARDSEARCH_HOME="{a_file}"),
    case("corpus", "search", "x", GUARDSEARCH_HOME="/proc/version"),
    case("corpus", "add", "{missing}", "--name", "x"),
    case("corpus", "add", "{binary}", "--name", "x"),
    case("corpus", "add", "{folder}", "--name", "../../evil"),
    case("corpus", "add", "{folder}", "--name", "a b"),
    case("corpus", "search", ""),
    case("corpus", "search", "x", "-k", "0"),
    case("corpus", "remove", "nope"),
    # -- runs: the store
    case("runs", "list", GUARDSEARCH_DB="{garbage_db}"),
    case("runs", "list", GUARDSEARCH_DB="/proc/version"),
    case("runs", "list", GUARDSEARCH_DB="{folder}"),
    case("runs", "list", GUARDSEARCH_HOME="{a_file}"),
    case("runs", "list", "--store", "{garbage_db}"),
    case("runs", "list", "--status", "nope", "--store", "{store}"),
    case("runs", "list", "--limit", "0", "--store", "{store}"),
    case("runs", "show", "nope", "--store", "{store}"),
    case("runs", "show", "", "--store", "{store}"),
    case("runs", "resume", "nope", "--store", "{store}"),
    case("runs", "resume", "{solved}", "--store", "{store}"),
    case("runs", "cancel", "nope", "--store", "{store}"),
    # -- runs export and view: where files go
    case("runs", "export", "nope", "--store", "{store}"),
    case("runs", "export", "{solved}", "--store", "{store}", "--out", "{folder}"),
    case("runs", "export", "{solved}", "--store", "{store}", "--out", "{missing}/x.json"),
    case("runs", "view", "{solved}", "--store", "{store}", "--out", "{folder}"),
    case("runs", "view", "{solved}", "--store", "{store}", "--out", "{missing}/x.html"),
    case("runs", "view", "{export_dotdot}"),
    case("runs", "view", "{export_absolute}"),
    case("runs", "view", "{export_nul}"),
    case("runs", "view", "{export_not_a_string}"),
    case("runs", "view", "{export_bad_nodes}"),
    case("runs", "view", "{not_json_export}"),
    case("runs", "view", "{list_json}"),
    case("runs", "view", "{binary_json}"),
    case("runs", "view", "../../x", "--store", "{store}"),
    case("runs", "view", "/etc/passwd", "--store", "{store}"),
    case("runs", "view", "run-1\x00x", "--store", "{store}"),
    case("runs", "view", "nope", "--store", "{store}"),
    # -- runs start
    case("runs", "start", "game24", "{{", "--store", "{store}", *M),
    case("runs", "start", "game24", "[]", "--store", "{store}", *M),
    case("runs", "start", "game24", '{{"numbers": 5}}', "--store", "{store}", *M),
    case("runs", "start", "game24", '{{"numbers": "4"}}', "--store", "{store}", *M),
    case("runs", "start", "nope", "{{}}", "--store", "{store}", *M),
    case("runs", "start", "os:system", "{{}}", "--store", "{store}", *M),
    case("runs", "start", "game24", '{{"numbers": "4 5 6 10"}}', "--strategy", "nope", *M),
    *(
        case(
            "runs",
            "start",
            "game24",
            '{{"numbers": "4 5 6 10"}}',
            "--options",
            options,
            "--store",
            "{store}",
            *M,
        )
        for options in (
            '{{"trace": "x"}}',
            '{{"budget": 5}}',
            '{{"samples": 1000000000}}',
            '{{"width": "3"}}',
            "[1]",
            "{{",
        )
    ),
    # -- lock
    case("lock", "nope", "--store", "{store}"),
    case("lock", "nope", "--store", "{garbage_db}"),
    case("lock", "{solved}", "--store", "{store}", "--out", "{folder}"),
    # -- bench
    case("bench", "game24", "--range", "nope"),
    case("bench", "game24", "--range", "5:1"),
    case("bench", "game24", "--budgets", "x"),
    case("bench", "game24", "--methods", "nope"),
    case("bench", "game24", "--range", "0:2", "--methods", "io", "--budgets", "9" * 400),
    case("bench", "game24", "--range", "0:2", "--methods", "io", "--budgets", "-3"),
    case("bench", "game24", "--range", "0:1", "--methods", "io", "--out", "{a_file}", *M),
    case("bench", "run", "{binary}"),
    case("bench", "run", "{missing}"),
    case("bench", "run", "{folder}"),
    case("bench", "run", "{list_json}"),
    case("bench", "run", "{not_json}"),
    case("bench", "tune", "{missing}"),
    case("bench", "distill", "{missing}"),
    case("bench", "plan", "--pipelines", "nope"),
    # -- serve (every case fails before a server starts)
    case("serve", "--port", "0"),
    case("serve", "--port", "70000"),
    case("serve", "--log-level", "nope"),
    case("serve", "--api-key-file", "{missing}"),
    case("serve", "--api-key-file", "{folder}"),
]


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Files for the cases: binary, garbage, a folder, a store with one solved run."""
    root = tmp_path_factory.mktemp("bad-input")
    folder = root / "folder"
    folder.mkdir()
    (folder / "note.txt").write_text("a note")
    answers = root / "answers.json"
    answers.write_text(json.dumps(SOLVING))
    (root / "binary.dat").write_bytes(bytes(range(256)) * 4)
    (root / "binary.json").write_bytes(bytes(range(256)) * 4)
    (root / "garbage.db").write_bytes(b"this is not a database " * 100)
    (root / "a_file").write_text("x")
    (root / "list.json").write_text("[1, 2]")
    (root / "not_json.json").write_text("{nope: [")
    (root / "not_json_export.json").write_text("{nope")
    export = {"state": None, "events": [], "calls": []}
    for name, run_id in [
        ("dotdot", "../../x"),
        ("absolute", str(root / "owned")),
        ("nul", "run-1\x00/../x"),
        ("not_a_string", ["run-1"]),
    ]:
        (root / f"export_{name}.json").write_text(json.dumps({**export, "run": {"id": run_id}}))
    bad_nodes = {**export, "run": {"id": "run-1"}, "state": {"nodes": [{"no": "id"}]}}
    (root / "export_bad_nodes.json").write_text(json.dumps(bad_nodes))
    files = {
        name: str(root / f"{name}.json")
        for name in ("list", "not_json", "not_json_export", "binary")
    }
    made = runner.invoke(
        app,
        [
            "solve",
            "game24",
            "4 5 6 10",
            "--durable",
            "--store",
            str(root / "runs.db"),
            "--model",
            f"scripted:{answers}",
            "--quiet",
            "--json",
        ],
        env={"GUARDSEARCH_HOME": str(root / "home")},
    )
    assert made.exit_code == 0, made.output
    return {
        "root": str(root),
        "answers": str(answers),
        "binary": str(root / "binary.dat"),
        "binary_json": files["binary"],
        "folder": str(folder),
        "missing": str(root / "missing"),
        "a_file": str(root / "a_file"),
        "garbage_db": str(root / "garbage.db"),
        "list_json": files["list"],
        "not_json": files["not_json"],
        "not_json_export": files["not_json_export"],
        "store": str(root / "runs.db"),
        "solved": json.loads(made.stdout)["id"],
        **{
            f"export_{n}": str(root / f"export_{n}.json")
            for n in ("dotdot", "absolute", "nul", "not_a_string", "bad_nodes")
        },
    }


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Each case runs in an empty folder, with a home of its own and no keys or stores
    from the environment."""
    for var in ("GUARDSEARCH_DB", "GUARDSEARCH_MODEL", "GUARDSEARCH_LLAMA_EXTRA_BUFTS"):
        monkeypatch.delenv(var, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield work


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 100
    assert len({str(c) for c in CASES}) == len(CASES)  # no case twice


@pytest.mark.parametrize("bad", CASES, ids=[str(c)[:70] for c in CASES])
def test_bad_input_ends_with_one_clear_line(
    bad: Case, place: dict[str, str], workdir: Path
) -> None:
    args = [a.format(**place) for a in bad.args]
    env = {"GUARDSEARCH_HOME": str(workdir.parent / "home")}
    env.update({k: v.format(**place) for k, v in bad.env.items()})
    result = runner.invoke(app, args, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr + result.stdout
    assert result.exit_code == bad.code, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert not any(workdir.iterdir()), "a failed command left a file behind"


def test_runs_view_never_writes_where_an_export_says(place: dict[str, str], workdir: Path) -> None:
    root = Path(place["root"])
    for name in ("dotdot", "absolute", "nul"):
        result = runner.invoke(app, ["runs", "view", place[f"export_{name}"]])
        assert result.exit_code == 2 and "is not a run id" in result.stderr
    assert not (root / "owned.html").exists() and not (root / "owned").exists()
    assert not (workdir.parent.parent / "x.html").exists()
    assert list(root.rglob("*.html")) == []
    # A good export names its page after its (checked) id, in the current folder.
    exported = runner.invoke(
        app, ["runs", "export", place["solved"], "--store", place["store"], "--out", "run.json"]
    )
    assert exported.exit_code == 0, exported.stderr
    viewed = runner.invoke(app, ["runs", "view", "run.json"])
    assert viewed.exit_code == 0, viewed.stderr
    assert [p.name for p in workdir.glob("*.html")] == [f"{place['solved']}.html"]


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "game24", "-1 2 3 4"],
        ["solve", "game24", "--json", "-1 -2 -3 -4"],
        ["solve", "game24", "-1, 2, 3, 4", "--budget-calls", "2"],
    ],
)
def test_a_puzzle_may_start_with_a_negative_number(
    argv: list[str], place: dict[str, str], workdir: Path
) -> None:
    result = runner.invoke(app, [*argv, "--model", f"scripted:{place['answers']}", "--quiet"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 1, result.stderr  # parsed and searched: not solved, no error
    assert "error" not in result.stderr


def test_a_puzzle_of_1_or_20_numbers_is_refused_alike_everywhere(
    place: dict[str, str], workdir: Path
) -> None:
    """The CLI, --durable, runs start and POST /solve share the app's one check."""
    import httpx

    from guardsearch import ScriptedModel
    from guardsearch.server import create_app

    async def over_http(numbers: str) -> str:
        server = create_app(model=ScriptedModel(SOLVING), providers=[], api_key=[])
        transport = httpx.ASGITransport(app=server)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            response = await c.post("/solve", json={"problem": {"numbers": numbers}})
        assert response.status_code == 400
        return str(response.json()["error"]["message"])

    import asyncio

    model = ["--model", f"scripted:{place['answers']}"]
    for numbers in ("4", " ".join(["1"] * 20)):
        messages = {asyncio.run(over_http(numbers))}
        for argv in (
            ["solve", "game24", numbers],
            ["solve", "game24", numbers, "--durable", "--store", place["store"]],
            [
                "runs",
                "start",
                "game24",
                json.dumps({"numbers": numbers}),
                "--store",
                place["store"],
            ],
        ):
            result = runner.invoke(app, [*argv, *model])
            assert result.exit_code == 2, result.stderr
            messages.add(result.stderr.strip().removeprefix("error: "))
        assert len(messages) == 1 and "takes 2 to 6 numbers" in messages.pop()
