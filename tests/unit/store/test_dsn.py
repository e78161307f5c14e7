"""A PostgreSQL password never shows: not in a store's url, its messages, its exceptions
(the whole chain, as a traceback prints it), the log, or the CLI's output and --json.

The table covers a password in the user part and in a `password=` parameter, raw and
percent-encoded `@` and `:` in it, libpq key=value strings, and the other secret
keywords. The redaction needs no server; connecting goes to a port where nothing
listens (refused at once), and to the test server for a store that works.
"""

from __future__ import annotations

import json
import logging
import traceback
import uuid
from urllib.parse import quote

import pytest
from typer.testing import CliRunner

from guardsearch import ConfigError, StoreError
from guardsearch.cli import app
from guardsearch.store.dsn import redact, split_secrets
from guardsearch.store.open import open_store
from guardsearch.store.postgres import PostgresRunStore

NOWHERE = "127.0.0.1:1"  # nothing listens on port 1: connecting is refused at once

# (connection string, the secrets it holds, what is left to show)
CASES = [
    ("postgresql://u:Hunter2pw@h/db", ["Hunter2pw"], "postgresql://u@h/db"),
    ("postgres://u:Hunter2pw@h:5433/db", ["Hunter2pw"], "postgres://u@h:5433/db"),
    ("postgresql://u@h/db?password=Hunter2pw", ["Hunter2pw"], "postgresql://u@h/db"),
    (
        "postgresql://u@h/db?sslmode=disable&password=Hunter2pw&connect_timeout=3",
        ["Hunter2pw"],
        "postgresql://u@h/db?sslmode=disable&connect_timeout=3",
    ),
    ("postgresql://u@h/db?pass%77ord=Hunter2pw", ["Hunter2pw"], "postgresql://u@h/db"),
    ("postgresql://u:p@ss@h/db", ["p@ss"], "postgresql://u@h/db"),
    ("postgresql://u:p:ss@h/db", ["p:ss"], "postgresql://u@h/db"),
    ("postgresql://u:pa@ss:wo@rd@h:5432/db", ["pa@ss:wo@rd"], "postgresql://u@h:5432/db"),
    ("postgresql://u:p%40ss%3Aword@h/db", ["p@ss:word"], "postgresql://u@h/db"),
    ("postgresql://u@h/db?password=p%40ss%3Aw%26rd", ["p@ss:w&rd"], "postgresql://u@h/db"),
    ("postgresql://u:pw%2Fslash@h/db", ["pw/slash"], "postgresql://u@h/db"),
    (
        "postgresql://u:Hunter2pw@h1:5432,h2:5433/db?target_session_attrs=read-write",
        ["Hunter2pw"],
        "postgresql://u@h1:5432,h2:5433/db?target_session_attrs=read-write",
    ),
    ("postgresql://u:Hunter2pw@[::1]:5432/db", ["Hunter2pw"], "postgresql://u@[::1]:5432/db"),
    (
        "postgresql://u:Hunter2pw@h/db?sslpassword=KeyPass99",
        ["Hunter2pw", "KeyPass99"],
        "postgresql://u@h/db",
    ),
    ("host=h user=u password=Hunter2pw dbname=db", ["Hunter2pw"], "user=u dbname=db host=h"),
    ("host=h password='p@ss w:rd' dbname=db", ["p@ss w:rd"], "dbname=db host=h"),
    ("password=Hunter2pw host=h", ["Hunter2pw"], "host=h"),
]

# Passwords with '/', '?' or '#' left raw: where the password ends cannot be told, so
# the string is refused, and nothing of it is echoed.
MALFORMED = [
    ("postgresql://u:pa/ssWORD@h/db", "ssWORD"),
    ("postgresql://u:paXQ?ssWORD@h/db", "paXQ"),
    ("postgresql://u:12?ssWORD@h/db", "ssWORD"),
    ("postgresql://u:12#ssWORD@h/db", "ssWORD"),
    ("host=h password='unterminated", "unterminated"),
]


def at(dsn: str, where: str = NOWHERE) -> str:
    """`dsn` pointed at `where` (host:port) instead of `h`."""
    if "://" in dsn:
        for host in ("@h/", "@h:5432/", "@h:5433/", "@h1:5432,h2:5433/", "@[::1]:5432/"):
            dsn = dsn.replace(host, f"@{where}/")
        return dsn
    host, port = where.split(":")
    return dsn.replace("host=h", f"host={host} port={port}")


def everything_said(exc: BaseException) -> str:
    """The exception as a traceback prints it, its chain and every argument in it."""
    said = "".join(traceback.format_exception(exc))
    seen: BaseException | None = exc
    while seen is not None:
        said += repr(seen) + repr(seen.args) + repr(vars(seen))
        seen = seen.__cause__ or seen.__context__
    return said


def assert_hidden(text: str, secrets: list[str]) -> None:
    for secret in secrets:
        for form in (secret, quote(secret, safe=""), quote(secret)):
            assert form not in text, f"secret {secret!r} shown: {text[:300]}"


@pytest.mark.parametrize(("dsn", "secrets", "public"), CASES)
def test_the_secrets_are_split_off_the_connection_string(
    dsn: str, secrets: list[str], public: str
) -> None:
    shown, found = split_secrets(dsn)
    assert sorted(found.values()) == sorted(secrets)
    assert shown == public
    assert_hidden(shown, secrets)


@pytest.mark.parametrize(("dsn", "secrets", "public"), CASES)
def test_a_failed_connection_says_nothing_of_the_password(
    dsn: str, secrets: list[str], public: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ConfigError, match="cannot connect to") as caught:
        PostgresRunStore(at(dsn), wait=0)
    assert "refused" in str(caught.value) or "failed" in str(caught.value)
    assert_hidden(everything_said(caught.value), secrets)
    assert_hidden(caplog.text, secrets)


@pytest.mark.parametrize(("dsn", "fragment"), MALFORMED)
def test_a_string_whose_password_cannot_be_told_apart_is_refused_unechoed(
    dsn: str, fragment: str
) -> None:
    with pytest.raises(ConfigError, match="not a valid PostgreSQL") as caught:
        PostgresRunStore(at(dsn), wait=0)
    assert fragment not in everything_said(caught.value)


def test_redact_blanks_a_secret_in_any_form() -> None:
    secrets = {"password": "p@ss w"}
    text = "a p@ss w, b p%40ss%20w, c p%40ss%20w"
    assert redact(text, secrets) == "a ***, b ***, c ***"


@pytest.mark.parametrize(("dsn", "secrets"), [(d, s) for d, s, _ in CASES if "://" in d])
def test_the_cli_never_prints_the_password(
    dsn: str, secrets: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    for args in (["runs", "list"], ["runs", "list", "--json"], ["runs", "show", "run-1"]):
        monkeypatch.setenv("GUARDSEARCH_DB", at(dsn))
        result = runner.invoke(app, args)
        assert result.exit_code in (1, 2)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert_hidden(result.output, secrets)
        if "--json" in args and result.stdout.strip():
            json.loads(result.stdout)
        result = runner.invoke(app, [*args, "--store", at(dsn)])
        assert_hidden(result.output, secrets)


def test_a_working_store_shows_no_password_in_its_url_or_errors(pg_dsn: str) -> None:
    """On the test server: connect with a password holding '@' and ':' (the server
    trusts local users, so any password connects), then fail an operation."""
    secret = "s3cr@t:pw"
    user_part = pg_dsn.split("://", 1)[1].split("@", 1)[0].split(":", 1)[0]
    host_part = pg_dsn.rsplit("@", 1)[1]
    dsn = f"postgresql://{user_part}:{secret}@{host_part}"
    store = PostgresRunStore(dsn, schema=f"t_{uuid.uuid4().hex[:16]}", wait=0)
    try:
        assert store.schema_version() >= 1
        assert_hidden(store.url + repr(store) + repr(store._conn), [secret])
        store._conn.close()  # the connection is gone and, with wait=0, not waited for
        with pytest.raises(StoreError, match="store error") as caught:
            store.get_run("run-x")
        assert_hidden(everything_said(caught.value), [secret])
    finally:
        store.close()
    reopened = open_store(dsn)
    assert_hidden(reopened.url, [secret])
    reopened.close()
