"""Store fixtures: every store test runs on SQLite and on a real PostgreSQL server.

The PostgreSQL server is started once per session by `scripts/postgres.sh` (which
installs PostgreSQL with apt-get when it is missing) unless `GUARDSEARCH_TEST_PG_DSN`
names one already running; each test gets its own schema. Postgres tests are not
skipped when the server cannot start: they fail, so CI cannot silently lose them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from guardsearch.store.base import RunStore
from guardsearch.store.postgres import PostgresRunStore
from guardsearch.store.sqlite import SqliteRunStore

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "postgres.sh"
DSN_ENV = "GUARDSEARCH_TEST_PG_DSN"


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    given = os.environ.get(DSN_ENV)
    if given:
        yield given
        return
    folder = tempfile.mkdtemp(prefix="gs-pg-")
    try:
        started = subprocess.run(
            ["bash", str(SCRIPT), "start", folder],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if started.returncode != 0:
            pytest.fail(f"could not start PostgreSQL for the store tests:\n{started.stderr}")
        dsn = started.stdout.strip().splitlines()[-1].split("=", 1)[1]
        yield dsn
    finally:
        subprocess.run(
            ["bash", str(SCRIPT), "stop", folder], capture_output=True, timeout=120, check=False
        )
        shutil.rmtree(folder, ignore_errors=True)


def make_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> RunStore:
    if kind == "sqlite":
        return SqliteRunStore(tmp_path / "runs.db")
    dsn = request.getfixturevalue("pg_dsn")
    return PostgresRunStore(dsn, schema=f"t_{uuid.uuid4().hex[:16]}")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    """A fresh, empty run store of each kind."""
    the_store = make_store(request.param, tmp_path, request)
    yield the_store
    the_store.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteRunStore]:
    the_store = SqliteRunStore(tmp_path / "runs.db")
    yield the_store
    the_store.close()


@pytest.fixture
def reopen(request: pytest.FixtureRequest) -> Callable[[RunStore], RunStore]:
    """Another connection to the same store (as a second process would have)."""

    def again(the_store: RunStore) -> RunStore:
        if isinstance(the_store, SqliteRunStore):
            return SqliteRunStore(the_store.path)
        assert isinstance(the_store, PostgresRunStore)
        return PostgresRunStore(request.getfixturevalue("pg_dsn"), schema=the_store.schema)

    return again


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A SQLite run store as $GUARDSEARCH_DB, with the test's folder as the working dir."""
    path = tmp_path / "runs.db"
    monkeypatch.setenv("GUARDSEARCH_DB", str(path))
    monkeypatch.chdir(tmp_path)
    return path
