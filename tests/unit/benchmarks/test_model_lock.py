"""The benchmark scripts' model lock: taken at once when free, and a wait is announced."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest
from model_lock import release, take


def test_a_free_lock_is_taken_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = take(str(tmp_path / "model.lock"))
    release(handle)
    release(take(str(tmp_path / "model.lock")))  # released: free again at once
    assert handle.closed and capsys.readouterr().err == ""


def test_a_held_lock_is_waited_for_and_the_wait_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "model.lock"
    holder = path.open("a")
    fcntl.flock(holder, fcntl.LOCK_EX)  # another holder, as a `flock PATH` around the script
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(take(str(path))))
    waiter.start()
    time.sleep(0.3)
    assert got == [] and waiter.is_alive()  # still waiting while the other holds it
    fcntl.flock(holder, fcntl.LOCK_UN)
    holder.close()
    waiter.join(timeout=5)
    assert len(got) == 1
    release(got[0])  # type: ignore[arg-type]
    assert "waiting for the model lock" in capsys.readouterr().err
