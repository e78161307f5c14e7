"""PostgreSQL connection strings with their secrets split off, so nothing shown can carry them.

`split_secrets(dsn)` parses a `postgresql://` URL (with `urllib.parse`) or a libpq
`key=value` string (with psycopg's `conninfo_to_dict` / `make_conninfo`) and returns
the connection string without its password (in the user part or a `password=`
parameter) and without the other secret keywords (`sslpassword`, ...), plus those
secrets apart. The store connects
with the public string and the secrets as keyword arguments, and shows only the
public string: in messages, errors, logs and `--json` output. `redact(text, secrets)`
blanks any secret that an underlying error message might still echo.

A URL must percent-encode `/`, `?` and `#` in a password (RFC 3986; libpq agrees): one
that does not is refused without being echoed, since where its password ends cannot
be told. A raw `@` or `:` in the password is read as libpq's users mean it: the user
part runs to the last `@` before the host, the password from its first `:`.
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

from guardsearch.core.errors import ConfigError

# libpq keywords whose values are secrets.
SECRET_KEYS = (
    "password",
    "sslpassword",
    "oauth_client_secret",
    "scram_client_key",
    "scram_server_key",
)
HIDDEN = "***"
SCHEMES = ("postgresql://", "postgres://")


def split_secrets(dsn: str) -> tuple[str, dict[str, str]]:
    """(the connection string without secrets, the secrets by libpq keyword)."""
    if dsn.startswith(SCHEMES):
        return _split_url(dsn)
    return _split_conninfo(dsn)


def redact(text: str, secrets: dict[str, str]) -> str:
    """`text` with every secret (as given or percent-encoded) replaced by `***`."""
    for secret in sorted(set(secrets.values()), key=len, reverse=True):
        if secret:
            for form in {secret, quote(secret, safe=""), quote(secret)}:
                text = text.replace(form, HIDDEN)
    return text


def _malformed(scheme: str, why: str) -> ConfigError:
    return ConfigError(
        f"not a valid PostgreSQL URL ({scheme}://{HIDDEN}): {why}; a password with '/', "
        "'?' or '#' must be percent-encoded (e.g. '/' as %2F)"
    )


def _split_url(url: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(url)
    scheme = parts.scheme
    if parts.fragment or url.endswith("#"):
        raise _malformed(scheme, "it has a '#' fragment")
    userinfo, at, hosts = parts.netloc.rpartition("@")
    if "@" in parts.path:
        raise _malformed(scheme, "an '@' after the host")
    for host in hosts.split(","):
        port = host.rsplit("]", 1)[-1].partition(":")[2]
        if port and not port.isdigit():
            raise _malformed(scheme, "a port that is not a number")
    secrets: dict[str, str] = {}
    user, colon, password = userinfo.partition(":")
    if colon:
        secrets["password"] = unquote(password)
    kept = []
    for piece in parts.query.split("&") if parts.query else []:
        key, eq, value = piece.partition("=")
        if not eq:
            raise _malformed(scheme, "a query parameter without '='")
        if not _is_keyword(unquote(key)):
            raise _malformed(scheme, "a query parameter that is not a libpq keyword")
        if unquote(key) in SECRET_KEYS:
            secrets[unquote(key)] = unquote(value)
        else:
            kept.append(piece)
    netloc = f"{user}@{hosts}" if at else hosts
    query = f"?{'&'.join(kept)}" if kept else ""
    return f"{scheme}://{netloc}{parts.path}{query}", secrets


def _is_keyword(key: str) -> bool:
    """Does libpq take `key` (`ssl=true` too)? Without psycopg, every key passes."""
    try:
        from psycopg import pq
    except ImportError:  # pragma: no cover - depends on the install
        return True
    return key == "ssl" or any(d.keyword.decode() == key for d in pq.Conninfo.get_defaults())


def _split_conninfo(dsn: str) -> tuple[str, dict[str, str]]:
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError(
            "the Postgres store needs psycopg: pip install 'guardsearch[postgres]'"
        ) from exc
    try:
        params = conninfo_to_dict(dsn)
    except Exception:
        params = None
    if params is None:
        # Raised outside the handler: psycopg's message may quote the string, secrets
        # and all, and must not ride along as this error's context.
        raise ConfigError(
            "not a valid PostgreSQL connection string (a postgresql:// URL or "
            "libpq key=value pairs)"
        )
    secrets = {k: str(params.pop(k)) for k in SECRET_KEYS if params.get(k) is not None}
    return make_conninfo("", **params), secrets
