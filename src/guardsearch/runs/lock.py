"""Frozen solvers (docs/durable.md): `guardsearch.lock` pins what made a run succeed.

A fingerprint records the sha256 of every packaged prompt template, the solver
config (app, strategy, options, budget: not the problem instance), the model spec
and its weights digest, and the package version. An app named by import path
(`pkg.module:build`, code outside the package) adds the sha256 of its module's
source and of each step prompt of the space it builds. A run stores its fingerprint
when it is created; `guardsearch lock RUN_ID` writes it to `guardsearch.lock`; a
run started or resumed with `--locked` compares the current fingerprint with the
lock and refuses, naming every difference.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.registry import AppSetup, build_app
from guardsearch.runs.spec import RunSpec
from guardsearch.search.space import SearchSpace

LOCK_NAME = "guardsearch.lock"
LOCK_FORMAT = 1


class LockMismatch(ConfigError):
    """The solver differs from its lock file; `differences` names each change."""

    def __init__(self, path: Path, differences: list[str]) -> None:
        listed = "\n  - ".join(differences)
        super().__init__(f"{path} does not match this solver:\n  - {listed}")
        self.path = path
        self.differences = differences


def package_version() -> str:
    try:
        return version("guardsearch")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+local"


def prompt_digests() -> dict[str, str]:
    """sha256 of every packaged prompt template, by file name."""
    folder = resources.files("guardsearch.prompts")
    return {
        entry.name: hashlib.sha256(entry.read_bytes()).hexdigest()
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".j2")
    }


_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}


def _file_digest(path: Path) -> str | None:
    """sha256 of a file (cached by path, size and mtime); None if there is no such file."""
    if not path.is_file():
        return None
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _FILE_DIGESTS:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        _FILE_DIGESTS[key] = digest.hexdigest()
    return _FILE_DIGESTS[key]


def weights_digest(spec: str) -> str | None:
    """What pins a model spec's answers: weights sha256, or the log/script file's.

    None for a remote server (its weights are not ours to hash; the spec names it).
    """
    kind, _, rest = spec.strip().partition(":")
    if kind == "embedded":
        from guardsearch.models.embedded import DEFAULT_EMBEDDED

        return DEFAULT_EMBEDDED.sha256
    if kind in ("gguf", "replay", "scripted"):
        return _file_digest(Path(rest).expanduser())
    if kind == "record":
        return weights_digest(rest.partition("::")[2])
    return None


def step_prompt_digests(space: SearchSpace) -> dict[str, str]:
    """sha256 of each step's prompt template, by step name (spaces made of steps)."""
    out: dict[str, str] = {}
    for step in getattr(space, "steps", None) or ():
        template = getattr(step, "template", None)
        digest = getattr(template, "digest", None)
        if isinstance(digest, str):
            out[str(getattr(step, "name", len(out)))] = digest
    return out


def app_digests(spec: RunSpec, setup: AppSetup | None = None) -> dict[str, Any] | None:
    """What pins an app named by import path: its module's source and its step prompts.

    None for a built-in app (its code and prompts are the package's, pinned by the
    package version and the packaged prompt digests).
    """
    if ":" not in spec.app:
        return None
    module_name = spec.app.partition(":")[0]
    if setup is None:
        setup = build_app(spec.app, spec.problem, spec.strategy)
    module = importlib.import_module(module_name)  # imported by build_app already
    source = getattr(module, "__file__", None)
    digest = None
    if source and Path(source).is_file():
        digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    return {
        "module": module_name,
        "source_sha256": digest,
        "step_prompts": step_prompt_digests(setup.space),
    }


def fingerprint(spec: RunSpec, setup: AppSetup | None = None) -> dict[str, Any]:
    """The solver's identity as the lock file records it (`setup`: the app, if built)."""
    config = spec.solver_config()
    fp: dict[str, Any] = {
        "format": LOCK_FORMAT,
        "package_version": package_version(),
        "config": {"digest": stable_digest(config), "value": config},
        "model": {"spec": spec.model, "weights_sha256": weights_digest(spec.model)},
        "prompts": prompt_digests(),
    }
    app = app_digests(spec, setup)
    if app is not None:
        fp["app"] = app
    return fp


def write_lock(fp: dict[str, Any], path: Path, *, run_id: str) -> Path:
    path.write_text(json.dumps({**fp, "run": run_id}, indent=2, sort_keys=True) + "\n", "utf-8")
    return path


def read_lock(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"no lock file at {path}; create one with `guardsearch lock RUN_ID`"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read lock file {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != LOCK_FORMAT:
        raise ConfigError(f"{path} is not a guardsearch lock file (format {LOCK_FORMAT})")
    return data


def differences(locked: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Every way `current` differs from `locked`, in words."""
    out: list[str] = []
    if locked.get("package_version") != current["package_version"]:
        out.append(
            f"package version {locked.get('package_version')} -> {current['package_version']}"
        )
    old_cfg, new_cfg = locked.get("config", {}), current["config"]
    if old_cfg.get("digest") != new_cfg["digest"]:
        old_value, new_value = old_cfg.get("value", {}), new_cfg["value"]
        changed = [
            f"{k} {json.dumps(old_value.get(k))} -> {json.dumps(new_value.get(k))}"
            for k in sorted(set(old_value) | set(new_value))
            if old_value.get(k) != new_value.get(k)
        ]
        out.append("config changed: " + ("; ".join(changed) or "digest differs"))
    old_model, new_model = locked.get("model", {}), current["model"]
    if old_model.get("spec") != new_model["spec"]:
        out.append(f"model spec {old_model.get('spec')!r} -> {new_model['spec']!r}")
    elif old_model.get("weights_sha256") != new_model["weights_sha256"]:
        out.append(
            f"model weights of {new_model['spec']!r} changed "
            f"(sha256 {_short(old_model.get('weights_sha256'))} -> "
            f"{_short(new_model['weights_sha256'])})"
        )
    out += _digest_changes("prompt template", locked.get("prompts", {}), current["prompts"])
    out += _app_differences(locked.get("app"), current.get("app"))
    return out


def _app_differences(old: Any, new: Any) -> list[str]:
    """How a custom app's code and step prompts changed (see `app_digests`)."""
    if old == new or new is None:
        return []  # unchanged, or no longer a custom app (the config names that)
    name = new["module"]
    if not isinstance(old, dict):
        return [f"app module {name} is not pinned by the lock (written by an older guardsearch)"]
    out: list[str] = []
    if old.get("module") == name and old.get("source_sha256") != new["source_sha256"]:
        out.append(
            f"app module {name} changed (sha256 {_short(old.get('source_sha256'))} -> "
            f"{_short(new['source_sha256'])})"
        )
    out += _digest_changes("step prompt", old.get("step_prompts", {}), new["step_prompts"])
    return out


def _digest_changes(kind: str, old: dict[str, str], new: dict[str, str]) -> list[str]:
    """What was removed, added or changed between two name -> sha256 maps."""
    out: list[str] = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            out.append(f"{kind} {name} removed")
        elif name not in old:
            out.append(f"{kind} {name} added")
        elif old[name] != new[name]:
            out.append(f"{kind} {name} changed (sha256 {_short(old[name])} -> {_short(new[name])})")
    return out


def _short(digest: Any) -> str:
    return f"{digest[:12]}…" if isinstance(digest, str) else str(digest)


def check_lock(spec: RunSpec, path: Path, setup: AppSetup | None = None) -> None:
    """Raise LockMismatch (a ConfigError) unless `spec`'s solver matches the lock file."""
    found = differences(read_lock(path), fingerprint(spec, setup))
    if found:
        raise LockMismatch(path, found)
