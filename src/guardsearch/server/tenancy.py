"""Whose request it is, and whose runs it may touch.

With API keys, every async job and every durable run started over HTTP belongs to the
key that started it: the job keeps the key's id (`key_id`: a digest, never the key), a
durable run keeps it in its spec (`RunSpec.tenant`). Another key gets the 404 of an
unknown id on every route; its lists leave such runs out. An admin key
(`GUARDSEARCH_ADMIN_KEY`, `create_app(admin_key=...)`) sees and acts on every run, also
runs nobody's key started (the CLI's). A server without keys is single-tenant: whoever
reaches it (on loopback by default) is its one user and sees every run.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from guardsearch.server.security import ADMIN_SCOPE, KEY_SCOPE
from guardsearch.store.base import RunRecord


@dataclass(frozen=True)
class Tenant:
    """The caller: its key id (None without keys), whether it holds an admin key, and
    whether the server has keys at all (without, there is one tenant)."""

    id: str | None
    admin: bool = False
    keyed: bool = False

    def owns(self, owner: str | None) -> bool:
        """May the caller see and act on something started by `owner` (a key id)?"""
        if not self.keyed or self.admin:
            return True
        return owner is not None and owner == self.id

    def sees(self, record: RunRecord) -> bool:
        return self.owns(run_tenant(record))

    @property
    def stamp(self) -> str:
        """What a run started by this caller records as its tenant ("" without keys)."""
        return self.id or ""


def run_tenant(record: RunRecord) -> str | None:
    """The key id a durable run belongs to (None: started without a key)."""
    value = record.spec.get("tenant") if isinstance(record.spec, dict) else None
    return value if isinstance(value, str) and value else None


def tenant_of(request: Request) -> Tenant:
    return Tenant(
        id=request.scope.get(KEY_SCOPE),
        admin=bool(request.scope.get(ADMIN_SCOPE)),
        keyed=bool(getattr(request.app.state, "keyed", False)),
    )
