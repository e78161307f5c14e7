"""Versioned schema migrations shared by the SQLite and Postgres stores.

Each migration is a version number and its statements, in SQL both databases accept.
A store applies the versions it has not seen, each in its own transaction, and
records them in `schema_migrations`; a database newer than this code is refused.
Never edit a released migration: add the next one.
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE runs (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL DEFAULT '',
                app TEXT NOT NULL,
                strategy TEXT NOT NULL,
                status TEXT NOT NULL,
                spec TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                calls INTEGER NOT NULL DEFAULT 0,
                prompt_tokens BIGINT NOT NULL DEFAULT 0,
                completion_tokens BIGINT NOT NULL DEFAULT 0,
                cost DOUBLE PRECISION NOT NULL DEFAULT 0,
                expansions INTEGER NOT NULL DEFAULT 0,
                nodes INTEGER NOT NULL DEFAULT 0,
                checkpoints INTEGER NOT NULL DEFAULT 0,
                sessions INTEGER NOT NULL DEFAULT 0,
                termination TEXT,
                result TEXT,
                error TEXT,
                question TEXT,
                paused_node TEXT,
                owner TEXT,
                frontier TEXT
            )""",
            """CREATE TABLE events (
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                session INTEGER NOT NULL,
                kind TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL,
                step TEXT NOT NULL,
                node TEXT NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (run_id, seq)
            )""",
            """CREATE TABLE nodes (
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (run_id, id)
            )""",
            """CREATE TABLE contexts (
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                digest TEXT NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (run_id, digest)
            )""",
            """CREATE TABLE closed (
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                key TEXT NOT NULL,
                node TEXT NOT NULL,
                PRIMARY KEY (run_id, key)
            )""",
            """CREATE TABLE calls (
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                digest TEXT NOT NULL,
                request TEXT NOT NULL,
                completion TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (run_id, digest)
            )""",
        ),
    ),
    (
        2,
        (
            "CREATE INDEX runs_by_created ON runs (created_at)",
            "CREATE INDEX runs_by_status ON runs (status)",
        ),
    ),
    (
        3,
        (
            # The owner's lease (refreshed at each checkpoint) and a cancel request the
            # live run polls at each checkpoint.
            "ALTER TABLE runs ADD COLUMN lease_until DOUBLE PRECISION",
            "ALTER TABLE runs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0",
            # Strategy tables (A*'s open set, a BFS level) as rows, saved incrementally.
            """CREATE TABLE frontier_rows (
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                key TEXT NOT NULL,
                pos BIGINT NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (run_id, name, key)
            )""",
        ),
    ),
    (
        4,
        (
            # How often each request was paid for: 1, unless an answer was lost between
            # the provider and its memo insert and asked again (the provider's bill).
            "ALTER TABLE calls ADD COLUMN paid INTEGER NOT NULL DEFAULT 1",
        ),
    ),
)

LATEST = MIGRATIONS[-1][0]
