"""The RunStore contract, run on SQLite and on a real PostgreSQL server alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from durable_apps import STRATEGIES, answer_for, deep_space, search_app

from guardsearch import ConfigError, ModelError, ModelRequest, ScriptedModel
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.runs.checkpoint import Checkpointer, load_state
from guardsearch.search import SearchState
from guardsearch.search.serialize import context_to_dict
from guardsearch.store.base import RunStore
from guardsearch.store.migrations import LATEST
from guardsearch.store.sql import dumps
from guardsearch.store.sqlite import SqliteRunStore


def new_run(store: RunStore, **spec: Any) -> str:
    return store.create_run(app="a", strategy="dfs", spec=spec, fingerprint={"v": 1}).id


def event(kind: str = "note", **data: Any) -> dict[str, Any]:
    return {"kind": kind, "at": 1.5, "step": "s", "node": "n1", "data": data}


def test_a_new_run_is_created_with_its_spec(store: RunStore) -> None:
    run = store.create_run(
        app="game24", strategy="astar", spec={"numbers": "4 5 6 10"}, fingerprint={"x": 1}, name="n"
    )
    again = store.get_run(run.id)
    assert again == run
    assert (again.status, again.app, again.strategy, again.name) == (
        "created",
        "game24",
        "astar",
        "n",
    )
    assert again.spec == {"numbers": "4 5 6 10"} and again.fingerprint == {"x": 1}


def test_an_unknown_run_is_a_config_error(store: RunStore) -> None:
    with pytest.raises(ConfigError, match="no run 'run-nope'"):
        store.get_run("run-nope")


def test_runs_are_listed_newest_first_and_filtered_by_status(store: RunStore) -> None:
    ids = [new_run(store) for _ in range(3)]
    store.transition(ids[1], "running")
    assert [r.created_at for r in store.list_runs()] == sorted(
        (r.created_at for r in store.list_runs()), reverse=True
    )
    assert {r.id for r in store.list_runs()} == set(ids)
    assert [r.id for r in store.list_runs(status="running")] == [ids[1]]
    assert len(store.list_runs(limit=2)) == 2


def test_the_lifecycle_allows_only_its_transitions(store: RunStore) -> None:
    run = new_run(store)
    with pytest.raises(ConfigError, match="is created; it can become cancelled, running"):
        store.transition(run, "succeeded")
    store.transition(run, "running", owner="h:1", new_session=True)
    store.transition(run, "paused", question="go?", paused_node="n3")
    paused = store.get_run(run)
    assert (paused.status, paused.question, paused.paused_node) == ("paused", "go?", "n3")
    store.transition(run, "running", new_session=True)
    done = store.transition(run, "succeeded", termination="success", result={"answer": 24})
    assert (done.result, done.sessions, done.question) == ({"answer": 24}, 2, None)
    with pytest.raises(ConfigError, match="final"):
        store.transition(run, "running")
    with pytest.raises(ConfigError, match="unknown run status"):
        store.transition(new_run(store), "sleeping")  # type: ignore[arg-type]


def test_events_are_appended_in_order_across_sessions(store: RunStore) -> None:
    run = new_run(store)
    store.transition(run, "running", new_session=True)
    store.append_events(run, [event(i=0), event(i=1)])
    store.transition(run, "running", new_session=True)
    store.append_events(run, [event("model_call", i=2)])
    got = store.events(run)
    assert [e["seq"] for e in got] == [0, 1, 2]
    assert [e["session"] for e in got] == [1, 1, 2]
    assert [e["data"]["i"] for e in got] == [0, 1, 2]
    assert got[2]["kind"] == "model_call" and got[0]["node"] == "n1"


def test_paid_calls_are_remembered_once_by_digest(store: RunStore) -> None:
    run = new_run(store)
    assert store.recall(run, "d1") is None
    store.remember(run, "d1", {"messages": []}, {"text": "a"})
    store.remember(run, "d1", {"messages": []}, {"text": "b"})  # a repeat keeps the answer
    assert store.recall(run, "d1") == {"text": "a"}
    assert [(c["digest"], c["paid"]) for c in store.calls(run)] == [("d1", 2)]  # and is billed
    assert store.recall(new_run(store), "d1") is None  # memos are per run


async def _search_saving(store: RunStore, run: str, strategy: str, check: Any) -> SearchState:
    """Search, saving each checkpoint to `store`; `check(state, rows)` runs after each save."""
    from durable_apps import search_app

    from guardsearch.search import search

    setup = search_app({}, strategy)
    checkpointer = Checkpointer()

    def save(state: SearchState) -> None:
        rows = checkpointer.rows(state)
        store.save_checkpoint(run, rows, [event(size=len(state.changed))])
        checkpointer.written(rows)
        check(state, rows)

    result = await search(
        setup.space,
        strategy,
        model=ScriptedModel(answer_for(strategy)),
        on_expansion=save,
        **setup.options,
    )
    return result.state


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_incremental_checkpoints_rebuild_the_whole_state(
    store: RunStore, strategy: str
) -> None:
    run = new_run(store)
    saves: list[int] = []

    def check(state: SearchState, rows: Any) -> None:
        assert {ident for _, ident, _ in rows.nodes} == state.changed  # only what changed
        loaded = load_state(store.load_checkpoint(run))
        assert loaded is not None
        assert loaded.to_dict() == json.loads(json.dumps(state.to_dict()))
        saves.append(len(rows.nodes))

    final = await _search_saving(store, run, strategy, check)
    assert len(saves) >= 4 and max(saves) < len(final.tree)
    record = store.get_run(run)
    assert (record.checkpoints, record.nodes) == (len(saves), len(final.tree))
    assert record.calls == final.usage.calls
    assert len(store.events(run)) == len(saves)


@pytest.mark.parametrize("strategy", ["astar", "bfs"])
async def test_a_save_writes_what_the_expansion_changed_not_the_whole_frontier(
    store: RunStore, strategy: str
) -> None:
    from durable_apps import wide_answer, wide_app

    from guardsearch.search import search

    run = new_run(store)
    checkpointer = Checkpointer()
    frontier: list[int] = []  # bytes of the part written whole
    table_rows: list[int] = []  # frontier rows written or deleted

    def save(state: SearchState) -> None:
        rows = checkpointer.rows(state)
        store.save_checkpoint(run, rows, [])
        checkpointer.written(rows)
        frontier.append(len(dumps(rows.frontier)))
        table_rows.append(len(rows.table_rows) + len(rows.table_deletes) + len(rows.table_resets))

    def grow(expansions: int, resume: Any = None, hook: Any = None) -> Any:
        return search(
            wide_app({}, strategy).space,
            strategy,
            model=ScriptedModel(wide_answer),
            on_expansion=hook,
            max_expansions=expansions,
            resume=resume,
        )

    result = await grow(200, hook=save)
    assert len(result.tree) == 601 and len(frontier) == 202
    # The open set / BFS level grew to hundreds of nodes; what a save writes did not.
    assert max(frontier) < 1000
    assert sum(table_rows) <= 3 * len(result.tree)  # each node enters and leaves once
    assert max(table_rows[1:]) == 4  # the expanded node's row goes, three children come
    # The rows rebuild the state exactly, and it goes on exactly like an unbroken run.
    loaded = load_state(store.load_checkpoint(run))
    assert loaded is not None
    assert loaded.to_dict() == json.loads(json.dumps(result.state.to_dict()))
    resumed, whole = await grow(260, resume=loaded), await grow(260)
    assert resumed.state.to_dict() == whole.state.to_dict()


async def test_a_deep_path_writes_each_context_as_a_small_delta_of_its_parent(
    store: RunStore,
) -> None:
    from durable_apps import wide_answer

    from guardsearch.search import search

    run = new_run(store)
    checkpointer = Checkpointer()
    written: list[int] = []

    def save(state: SearchState) -> None:
        rows = checkpointer.rows(state)
        store.save_checkpoint(run, rows, [])
        checkpointer.written(rows)
        written.extend(len(dumps(data)) for _, data in rows.contexts)

    result = await search(deep_space(), "dfs", model=ScriptedModel(wide_answer), on_expansion=save)
    assert max(n.depth for n in result.tree) == 80
    whole = max(len(dumps(context_to_dict(n.context))) for n in result.tree)
    assert whole > 3000  # a context holds the whole path (79 results)
    assert max(written[1:]) < 600  # the root's, then what each child or amendment added
    loaded = load_state(store.load_checkpoint(run))
    assert loaded is not None
    assert loaded.to_dict() == json.loads(json.dumps(result.state.to_dict()))


@pytest.mark.parametrize("strategy", ["astar", "bfs"])
async def test_a_frontier_saved_before_tables_existed_still_resumes(strategy: str) -> None:
    from guardsearch.search import search

    setup = search_app({}, strategy)
    snapshots: list[dict[str, Any]] = []
    whole = await search(
        setup.space,
        strategy,
        model=ScriptedModel(answer_for(strategy)),
        on_expansion=lambda s: snapshots.append(json.loads(json.dumps(s.to_dict()))),
        **setup.options,
    )
    old = snapshots[2]
    tables = old.pop("tables")
    if strategy == "astar":  # the old form: a heap list and a retry list in `data`
        old["data"]["open"] = [[f, seq, k] for k, (f, seq, _) in tables["open"]]
        old["data"]["retry"] = [k for k, (_, _, retry) in tables["open"] if retry]
    else:  # a level list (best first) with an index into it, and the next level's list
        nodes = {n["id"]: n for n in old["nodes"]}
        level = old["data"].pop("level")
        todo = sorted(
            (k for k, _ in tables[level]), key=lambda i: (float(nodes[i]["h"]), int(i[1:]))
        )
        old["data"]["frontier"], old["data"]["index"] = ["n0", *todo], 1  # n0: expanded
        old["data"]["next"] = [k for k, _ in tables["b" if level == "a" else "a"]]
    resumed = await search(
        search_app({}, strategy).space,
        strategy,
        model=ScriptedModel(answer_for(strategy)),
        resume=old,
        **setup.options,
    )
    assert [n.text for n in resumed.path] == [n.text for n in whole.path]
    assert (resumed.calls, len(resumed.tree)) == (whole.calls, len(whole.tree))


async def test_contexts_shared_by_nodes_are_written_once(store: RunStore) -> None:
    run = new_run(store)
    contexts: list[int] = []
    nodes: list[int] = []

    def check(state: SearchState, rows: Any) -> None:
        contexts.append(len(rows.contexts))
        nodes.append(len(rows.nodes))

    await _search_saving(store, run, "bfs", check)
    assert sum(contexts) < sum(nodes)


async def test_a_failed_checkpoint_leaves_the_previous_one_intact(store: RunStore) -> None:
    snapshots: list[str] = []
    await _search_saving(
        store, new_run(store), "astar", lambda s, r: snapshots.append(json.dumps(s.to_dict()))
    )
    run = new_run(store)
    checkpointer = Checkpointer()
    first = SearchState.from_dict(json.loads(snapshots[0]))
    first.changed = {n.id for n in first.tree}
    store.save_checkpoint(run, checkpointer.rows(first), [event()])
    later = SearchState.from_dict(json.loads(snapshots[-1]))
    later.changed = {n.id for n in later.tree}
    rows = checkpointer.rows(later)
    # The nodes are written, then a malformed event fails the transaction half-way.
    with pytest.raises(KeyError):
        store.save_checkpoint(run, rows, [event(), {"at": 1.0}])
    loaded = load_state(store.load_checkpoint(run))
    assert loaded is not None and loaded.to_dict() == json.loads(snapshots[0])
    assert len(store.events(run)) == 1
    assert store.get_run(run).checkpoints == 1


def test_a_run_without_a_checkpoint_has_no_saved_state(store: RunStore) -> None:
    assert store.load_checkpoint(new_run(store)) is None


def test_the_schema_is_migrated_to_the_latest_version_once(store: RunStore) -> None:
    assert store.schema_version() == LATEST
    assert store.migrate() == LATEST  # type: ignore[attr-defined]
    assert store.schema_version() == LATEST


class FailsOnce:
    """A scripted model that raises at its `at`-th call, once; counts calls per digest."""

    def __init__(self, strategy: str, at: int) -> None:
        self.inner = ScriptedModel(answer_for(strategy))
        self.at = at
        self.name = "scripted"
        self.calls = 0
        self.paid: dict[str, int] = {}

    async def complete(self, request: ModelRequest) -> Any:
        self.calls += 1
        if self.calls == self.at:
            raise ModelError("connection reset")
        digest = request.digest()
        self.paid[digest] = self.paid.get(digest, 0) + 1
        return await self.inner.complete(request)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_a_run_broken_at_any_call_resumes_to_the_same_result_paying_once(
    store: RunStore, strategy: str
) -> None:
    spec = RunSpec(app="durable_apps:search_app", strategy=strategy, model="scripted")
    whole = await execute_run(
        create_run(spec, store).id, store, model=ScriptedModel(answer_for(strategy))
    )
    assert whole.result is not None
    for at in range(2, whole.calls + 1):
        model = FailsOnce(strategy, at)
        run = create_run(spec, store).id
        broken = await execute_run(run, store, model=model)
        assert broken.status == "failed" and "connection reset" in (broken.error or "")
        resumed = await execute_run(run, store, model=model)
        assert resumed.status == whole.status
        assert resumed.result == whole.result
        assert resumed.calls == whole.calls
        assert set(model.paid.values()) == {1}, "a resumed run paid for a call twice"


def test_a_database_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    SqliteRunStore(path).close()
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (?, 0)", (LATEST + 5,))
    with pytest.raises(ConfigError, match=f"schema version {LATEST + 5}, newer"):
        SqliteRunStore(path)


def test_an_old_database_is_migrated_forward(tmp_path: Path) -> None:
    import sqlite3

    from guardsearch.store.migrations import MIGRATIONS

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)"
        )
        for statement in MIGRATIONS[0][1]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (1, 0)")
    store = SqliteRunStore(path)
    assert store.schema_version() == LATEST
    names = {r[0] for r in store.connection.execute("SELECT name FROM sqlite_master")}
    assert "runs_by_created" in names


def test_sqlite_runs_in_wal_mode(sqlite_store: SqliteRunStore) -> None:
    mode = sqlite_store.connection.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
