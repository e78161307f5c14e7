"""Nothing in a request sets sandbox limits past the server's maxima or a path on the
server; code from a cache file or a run store is vetted again before it runs (issue 34)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from guardsearch import ScriptedModel
from guardsearch.apps.game24 import parse_numbers
from guardsearch.apps.game24.program import game24_domain
from guardsearch.core.errors import ConfigError
from guardsearch.guards.sandbox import Limits
from guardsearch.search.program import ProgramCache
from guardsearch.search.program_run import run_program
from guardsearch.search.strategies.program import ProgramOptions
from guardsearch.server import create_app

PROBLEM = {"app": "game24", "problem": {"numbers": "4 5 6 10"}, "strategy": "program"}
ESCAPE = (
    "from fractions import Fraction\ndef is_goal(state):\n"
    "    match Fraction.limit_denominator:\n        case object(__globals__=g):\n"
    "            return g['sys'].modules['os'].listdir('/')\n"
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    for var in ("GUARDSEARCH_API_KEY", "GUARDSEARCH_API_KEY_FILE", "GUARDSEARCH_ADMIN_KEY"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "home"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(model=ScriptedModel(["unused"]), providers=[],
                     run_store=str(tmp_path / "runs.db"))  # fmt: skip
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        yield c


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"cpu_seconds": 1_000_000}, "'cpu_seconds' must be a number above 0 and at most 60"),
        ({"memory_mb": 1_000_000}, "'memory_mb' must be a number above 0 and at most 1024"),
        ({"wall_seconds": 1e6}, "'wall_seconds' must be a number above 0 and at most 60"),
        ({"cpu_seconds": 0}, "'cpu_seconds' must be a number above 0"),
        ({"memory_mb": -5}, "'memory_mb' must be a number above 0"),
        ({"wall_seconds": True}, "'wall_seconds' must be a number"),
        ({"cache_dir": "/some/path"}, "'cache_dir' is the server's to set"),
        ({"cache_dir": None}, "'cache_dir' is the server's to set"),
    ],
)
async def test_solve_refuses_limits_past_the_maxima_and_paths(
    client: httpx.AsyncClient, tmp_path: Path, options: dict[str, object], says: str
) -> None:
    response = await client.post("/solve", json={**PROBLEM, "options": options})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["type"] == "invalid_request"
    assert says in response.json()["error"]["message"]
    started = await client.post("/ui/api/runs", json={**PROBLEM, "options": options})
    assert started.status_code == 400 and says in started.json()["error"]["message"]
    assert not Path("/some/path").exists()


async def test_solve_takes_limits_within_the_maxima(client: httpx.AsyncClient) -> None:
    from guardsearch.server.schemas import SolveRequest
    from guardsearch.server.solve import check_request

    options = {"cpu_seconds": 10, "memory_mb": 256, "wall_seconds": 20.5}
    spec = check_request(SolveRequest.model_validate({**PROBLEM, "options": options}))
    assert spec.options["cpu_seconds"] == 10 and spec.options["wall_seconds"] == 20.5


@pytest.mark.parametrize(
    "options", [{"cpu_seconds": 10**6}, {"memory_mb": 10**6}, {"wall_seconds": 10**6}]
)
def test_the_strategy_itself_bounds_its_sandbox(options: dict[str, int]) -> None:
    with pytest.raises(ConfigError, match="must be between"):
        ProgramOptions(**options)  # type: ignore[arg-type]


def test_cached_code_the_allowlist_refuses_is_dropped(tmp_path: Path) -> None:
    domain = game24_domain(parse_numbers("4 5 6 10"))
    cache = ProgramCache(tmp_path / "programs")
    good = "def successors(state):\n    return []\n"
    path = cache.save(domain, "m", {"is_goal": ESCAPE, "successors": good})
    assert "limit_denominator" in path.read_text()  # someone wrote it into the file
    sources, _ = cache.load(domain, "m")
    assert sources == {"successors": good}


async def test_code_from_a_checkpoint_is_vetted_before_it_runs() -> None:
    domain = game24_domain(parse_numbers("4 5 6 10"))
    sources = {"is_goal": ESCAPE, "successors": "def successors(state):\n    return []\n"}
    run = await run_program(domain, sources, limits=Limits())
    assert run.fault is not None and run.fault.fn == "is_goal"
    assert "not allowed" in run.fault.feedback and "class pattern" in run.fault.feedback
    assert run.expanded == 0 and json.dumps(run.fault.feedback)
