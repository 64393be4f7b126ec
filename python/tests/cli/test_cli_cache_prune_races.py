"""End-to-end tests of `tensoracle cache prune` against other processes: identity locks held
elsewhere, files that change or vanish between the plan and the removal, failed removals."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cache_cli import DAY_NS, NOW_NS, engine, names, prune, tensoracle_executable
from engine_files import set_mtime_ns


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    directory.mkdir()
    return directory


@pytest.fixture
def lock_holder() -> Iterator[Any]:
    """Holds flock locks on lock files from this process (another process than the command)."""
    handles: list[Any] = []

    def hold(lock_path: Path, mode: int = fcntl.LOCK_SH) -> None:
        handle = open(lock_path, "a+b")  # noqa: SIM115 - closed by the fixture
        fcntl.flock(handle.fileno(), mode)
        handles.append(handle)

    yield hold
    for handle in handles:
        handle.close()


# --- locks and races --------------------------------------------------------------------------


def test_an_entry_whose_lock_is_held_is_never_removed(cache: Path, lock_holder: Any) -> None:
    busy = engine(cache, "busy", mtime_ns=NOW_NS - 9 * DAY_NS)
    idle = engine(cache, "idle", mtime_ns=NOW_NS - 9 * DAY_NS)
    lock_holder(cache / f"{busy.name}.lock", fcntl.LOCK_SH)

    _, dry_plan, _ = prune(cache, "--unused-for", "1", "--dry-run")
    assert names(dry_plan["selected"]) == [idle.name]

    status, plan, result = prune(cache, "--unused-for", "1")
    assert status == 0
    [excluded] = plan["excluded"]
    assert excluded["file_name"] == busy.name
    assert excluded["reason"] == "in use by another process"
    assert names(result["excluded"]) == [busy.name]
    assert names(result["removed"]) == [idle.name]
    assert busy.exists()
    assert not idle.exists()


def test_max_size_skips_a_locked_entry_and_takes_the_next_oldest(
    cache: Path, lock_holder: Any
) -> None:
    oldest = engine(cache, "oldest", mtime_ns=NOW_NS - 9 * DAY_NS)
    older = engine(cache, "older", mtime_ns=NOW_NS - 8 * DAY_NS)
    newest = engine(cache, "newest", mtime_ns=NOW_NS)
    lock_holder(cache / f"{oldest.name}.lock", fcntl.LOCK_EX)
    size = oldest.stat().st_size
    status, plan, _ = prune(cache, "--max-size", str(2 * size))
    assert status == 0
    assert names(plan["selected"]) == [older.name]
    assert oldest.exists()
    assert newest.exists()
    assert not older.exists()


def test_changes_between_plan_and_removal(cache: Path) -> None:
    """The plan is printed before anything is removed: while the command blocks writing a plan
    larger than the pipe buffer, this test deletes one selected file, changes another and locks
    a third; the result must report them as missing, failed and excluded."""
    paths = [
        engine(cache, f"entry-{index:04d}", mtime_ns=NOW_NS - 9 * DAY_NS - index, plan_size=1)
        for index in range(1500)
    ]
    vanished, changed, touched, locked = paths[10], paths[20], paths[30], paths[40]
    process = subprocess.Popen(
        [tensoracle_executable(), "cache", "prune", "--cache-dir", str(cache), "--unused-for", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert process.stdout is not None
    first = os.read(process.stdout.fileno(), 1)  # the plan is decided once output begins
    vanished.unlink()
    with changed.open("ab") as handle:
        handle.write(b"more")
    set_mtime_ns(touched, touched.stat().st_mtime_ns + 1)
    lock = open(cache / f"{locked.name}.lock", "a+b")  # noqa: SIM115 - closed below
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
    try:
        rest, errors = process.communicate(timeout=120)
    finally:
        lock.close()
    output = (first + rest).decode()
    plan_line, result_line = output.splitlines()
    plan = json.loads(plan_line)["plan"]
    result = json.loads(result_line)["result"]
    assert len(plan["selected"]) == 1500, "the plan must be complete before any change"
    assert len(plan_line) > 200_000, "the plan must exceed the pipe buffer for this test"

    assert process.returncode == 1, errors
    assert result["missing"] == [{"file_name": vanished.name}]
    failed = {entry["file_name"]: entry["reason"] for entry in result["failed"]}
    assert set(failed) == {changed.name, touched.name}
    assert "size" in failed[changed.name]
    assert "recorded_at_ns" in failed[touched.name]
    assert names(result["excluded"]) == [locked.name]
    assert result["excluded"][0]["reason"] == "in use by another process"
    assert len(result["removed"]) == 1500 - 4
    planned_sizes = {entry["file_name"]: entry["size_bytes"] for entry in plan["selected"]}
    assert result["bytes_removed"] == sum(planned_sizes[name] for name in names(result["removed"]))
    survivors = [changed, touched, locked]
    assert all(path.exists() for path in survivors)
    assert result["remaining_total_bytes"] == sum(path.stat().st_size for path in survivors)


@contextlib.contextmanager
def undeletable(path: Path) -> Iterator[None]:
    """Makes removing `path` fail: a read-only directory, or for root an immutable file."""
    if os.geteuid() != 0:
        path.parent.chmod(0o500)
        try:
            yield
        finally:
            path.parent.chmod(0o700)
        return
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root without chattr: cannot make a file undeletable")
    if subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False).returncode:
        pytest.skip(f"chattr +i is not supported on the file system of {path}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


def test_a_failed_removal_exits_1(cache: Path) -> None:
    old = engine(cache, "old", mtime_ns=NOW_NS - 9 * DAY_NS)
    (cache / f"{old.name}.lock").write_bytes(b"")  # a read-only directory cannot create it
    with undeletable(old):
        status, _, result = prune(cache, "--unused-for", "1")
        assert old.exists()
    assert status == 1
    assert names(result["failed"]) == [old.name]
    assert "cannot remove" in result["failed"][0]["reason"]
    assert result["removed"] == []
    assert result["bytes_removed"] == 0
