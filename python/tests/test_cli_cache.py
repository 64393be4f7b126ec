"""End-to-end tests of the installed native `tensoracle cache` command on temporary caches."""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from engine_files import (
    engine_file_bytes,
    set_mtime_ns,
    sha256_hex,
    snapshot,
    write_engine,
    write_file,
    write_weight_record,
)
from hypothesis import given, settings
from hypothesis import strategies as st

DAY_NS = 86_400 * 10**9
NOW_NS = time.time_ns()


def tensoracle_executable() -> str:
    scripts = Path(sys.executable).parent
    found = shutil.which("tensoracle", path=str(scripts))
    assert found is not None, f"the tensoracle command is not installed in {scripts}"
    return found


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tensoracle_executable(), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def cache_list(directory: Path) -> dict[str, Any]:
    completed = run("cache", "list", "--cache-dir", str(directory))
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def prune(directory: Path, *args: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """Runs prune; returns the exit status, the plan and the result (two JSON lines)."""
    completed = run("cache", "prune", "--cache-dir", str(directory), *args)
    lines = completed.stdout.splitlines()
    assert len(lines) == 2, (completed.stdout, completed.stderr)
    first, second = (json.loads(line) for line in lines)
    assert list(first) == ["plan"]
    assert list(second) == ["result"]
    return completed.returncode, first["plan"], second["result"]


def names(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["file_name"] for entry in entries]


def engine(
    directory: Path, name: str, *, mtime_ns: int, plan_size: int = 100, **extra: Any
) -> Path:
    conditions = {"name": name, "graph_version": "1", **extra}
    return write_engine(directory, conditions, plan=b"p" * plan_size, mtime_ns=mtime_ns)


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


# --- help and usage -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), "cache"),
        (("cache",), "prune"),
        (("cache", "list"), "--format"),
        (("cache", "prune"), "--unused-for"),
        (("cache", "verify"), "--cache-dir"),
    ],
)
def test_help_on_every_level(args: tuple[str, ...], expected: str) -> None:
    completed = run(*args, "--help")
    assert completed.returncode == 0
    assert expected in completed.stdout
    assert completed.stderr == ""


def test_prune_help_describes_both_options_and_exit_status() -> None:
    text = run("cache", "prune", "--help").stdout
    for word in ("--unused-for", "--max-size", "--dry-run", "KiB", "TiB", "Exit status"):
        assert word in text


BAD_VALUES = [
    ("--unused-for", "-1"),
    ("--unused-for", "nan"),
    ("--unused-for", "inf"),
    ("--unused-for", ""),
    ("--unused-for", "1e3"),
    ("--unused-for", "7d"),
    ("--max-size", "-1"),
    ("--max-size", "nan"),
    ("--max-size", "inf"),
    ("--max-size", "1.5XB"),
    ("--max-size", "10GB"),
    ("--max-size", ""),
    ("--max-size", "1 GiB"),
    ("--max-size", "18446744073709551616"),
]


@pytest.mark.parametrize(("option", "value"), BAD_VALUES)
def test_invalid_values_are_usage_errors_and_delete_nothing(
    cache: Path, option: str, value: str
) -> None:
    engine(cache, "old", mtime_ns=0)
    before = snapshot(cache)
    completed = run("cache", "prune", "--cache-dir", str(cache), option, value)
    assert completed.returncode == 2
    assert completed.stdout == ""
    first_line = completed.stderr.splitlines()[0]
    assert option in first_line
    assert f"'{value}'" in first_line
    assert "usage: tensoracle cache prune" in completed.stderr
    assert snapshot(cache) == before


@pytest.mark.parametrize("argument", ["--unused-for=-1", "--max-size=1.5XB", "--max-size=-0"])
def test_attached_values_are_checked_too(cache: Path, argument: str) -> None:
    completed = run("cache", "prune", "--cache-dir", str(cache), argument)
    option, value = argument.split("=")
    assert completed.returncode == 2
    assert f"invalid value '{value}' for {option}" in completed.stderr


@pytest.mark.parametrize("argument", ["--unused-for=", "--max-size="])
def test_an_attached_empty_value_is_a_usage_error_naming_the_option(
    cache: Path, argument: str
) -> None:
    completed = run("cache", "prune", "--cache-dir", str(cache), argument)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert argument.rstrip("=") in completed.stderr


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--dry-run",),
        ("--unused-for", "1", "--max-size", "1GiB"),
        ("--max-size", "1GiB", "--bogus"),
        ("--max-size",),
    ],
)
def test_prune_needs_exactly_one_criterion(cache: Path, args: tuple[str, ...]) -> None:
    engine(cache, "old", mtime_ns=0)
    before = snapshot(cache)
    completed = run("cache", "prune", "--cache-dir", str(cache), *args)
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr != ""
    assert snapshot(cache) == before


@pytest.mark.parametrize(
    "args",
    [
        ("cache",),
        (),
        ("cache", "list", "--format", "xml"),
        ("cache", "list", "--cache-dir", ""),
        ("cache", "list", "extra"),
        ("bogus",),
    ],
)
def test_other_misuse_exits_2(args: tuple[str, ...]) -> None:
    completed = run(*args)
    assert completed.returncode == 2
    assert completed.stderr != ""


# --- list -----------------------------------------------------------------------------------


def test_list_of_a_missing_directory_is_empty_and_creates_nothing(tmp_path: Path) -> None:
    listing = cache_list(tmp_path / "absent")
    assert listing == {"directory": str(tmp_path / "absent"), "entries": [], "total_size_bytes": 0}
    assert not (tmp_path / "absent").exists()


def test_list_describes_every_entry(cache: Path, tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")
    digest = sha256_hex(b"weights")
    unknown = "f" * 64
    write_weight_record(cache, weights, digest)
    write_weight_record(cache, tmp_path / "model.safetensors", digest)  # same path: one record
    conditions = {"name": "m", "graph_version": "2", "weights": [unknown, digest]}
    limited = write_engine(
        cache,
        conditions,
        references={"workspace_limit": 4 << 30},
        mtime_ns=1_700_000_000_123_456_789,
    )
    default = write_engine(
        cache, {"name": "d"}, references={"workspace_limit": None}, file_name="d.engine"
    )
    no_reference = write_engine(cache, {"name": "n"}, file_name="n.engine")
    write_file(cache / "e.engine", b"")
    write_file(cache / "b-junk.engine", b"this is not an engine")
    truncated = engine_file_bytes({"name": "t"}, plan=b"0123456789")[:-1]
    write_file(cache / "t.engine", truncated)
    write_file(cache / "m.engine.tmp-4242-0a1b2c", b"partial")
    write_file(cache / "d.engine.lock", b"")
    write_file(cache / "readme.txt", b"x")
    before = snapshot(cache)

    listing = cache_list(cache)

    assert snapshot(cache) == before, "listing must change nothing"
    assert listing["directory"] == str(cache)
    entries = {entry["file_name"]: entry for entry in listing["entries"]}
    assert names(listing["entries"]) == sorted(entries)
    assert set(entries) == {
        limited.name,
        "d.engine",
        "n.engine",
        "e.engine",
        "b-junk.engine",
        "t.engine",
        "m.engine.tmp-4242-0a1b2c",
    }
    files = [cache / name for name in entries]
    assert listing["total_size_bytes"] == sum(path.stat().st_size for path in files)

    entry = entries[limited.name]
    assert entry["status"] == "recognized"
    assert entry["size_bytes"] == limited.stat().st_size
    assert entry["recorded_at_ns"] == 1_700_000_000_123_456_789
    assert entry["recorded_at"] == "2023-11-14T22:13:20Z"
    assert entry["conditions"] == conditions
    assert entry["workspace_limit"] == 4 << 30
    assert entry["weight_paths"] == [
        {"sha256": unknown, "paths": []},
        {"sha256": digest, "paths": [str(weights)]},
    ]
    assert entries["d.engine"]["workspace_limit"] is None
    assert entries["d.engine"]["recorded_at_ns"] == default.stat().st_mtime_ns
    assert entries["n.engine"]["workspace_limit"] == "unknown"
    assert entries["n.engine"]["weight_paths"] == []
    assert no_reference.exists()

    assert entries["e.engine"]["status"] == "building or leftover"
    assert entries["m.engine.tmp-4242-0a1b2c"]["status"] == "building or leftover"
    assert entries["m.engine.tmp-4242-0a1b2c"]["temporary"] is True
    for name in ("b-junk.engine", "t.engine"):
        assert entries[name]["status"] == "unrecognized"
        assert "conditions" not in entries[name]
        assert "workspace_limit" not in entries[name]
    assert "not a tensoracle engine file" in entries["b-junk.engine"]["reason"]
    assert "truncated" in entries["t.engine"]["reason"]


def test_a_damaged_weight_record_gives_no_paths(cache: Path, tmp_path: Path) -> None:
    weights = tmp_path / "w.safetensors"
    weights.write_bytes(b"w")
    digest = sha256_hex(b"w")
    record = write_weight_record(cache, weights, digest)
    record.write_bytes(record.read_bytes().replace(b'"size":1', b'"size":2'))
    write_engine(cache, {"name": "m", "weights": [digest]}, file_name="m.engine")
    [entry] = cache_list(cache)["entries"]
    assert entry["weight_paths"] == [{"sha256": digest, "paths": []}]


def test_list_uses_xdg_cache_home_then_home(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "tensoracle").mkdir(parents=True)
    write_engine(xdg / "tensoracle", {"name": "x"}, file_name="x.engine")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    with_xdg = run("cache", "list", env={**env, "XDG_CACHE_HOME": str(xdg)})
    assert with_xdg.returncode == 0, with_xdg.stderr
    listing = json.loads(with_xdg.stdout)
    assert listing["directory"] == str(xdg / "tensoracle")
    assert names(listing["entries"]) == ["x.engine"]

    without = run("cache", "list", env=env)
    assert without.returncode == 0, without.stderr
    assert json.loads(without.stdout)["directory"] == str(
        tmp_path / "home" / ".cache" / "tensoracle"
    )


def test_list_of_a_path_that_is_not_a_directory_exits_1(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_bytes(b"x")
    completed = run("cache", "list", "--cache-dir", str(plain))
    assert completed.returncode == 1
    assert str(plain) in completed.stderr
    assert completed.stdout == ""


def test_list_table_for_people(cache: Path) -> None:
    table_engine = write_engine(
        cache,
        {"name": "a", "graph_version": "7", "targets": ["sm86", "sm120"]},
        plan=b"x" * 3000,
        file_name="a.engine",
        mtime_ns=0,
    )
    write_file(cache / "b.engine", b"")
    size = table_engine.stat().st_size
    human_size = f"{size // 1024}.{(size % 1024) * 10 // 1024}"
    completed = run("cache", "list", "--cache-dir", str(cache), "--format", "table")
    assert completed.returncode == 0
    header, first, second, total = completed.stdout.splitlines()
    assert header.split() == ["NAME", "GRAPH_VERSION", "SIZE", "RECORDED_AT", "STATUS", "TARGETS"]
    assert first.split() == [
        "a.engine",
        "7",
        human_size,
        "KiB",
        "1970-01-01T00:00:00Z",
        "recognized",
        "sm86,sm120",
    ]
    assert header.index("STATUS") == first.index("recognized") == second.index("building")
    assert total.startswith("2 entries")


# --- prune --unused-for -----------------------------------------------------------------------


def test_unused_for_selects_times_strictly_before_the_reported_cutoff(cache: Path) -> None:
    # Files 1 ms apart around the expected cutoff (now - 1 day), and a pair 1 ns apart: whatever
    # the exact instant of the run, the selection must be exactly the files before the cutoff.
    center = time.time_ns() - DAY_NS + 2 * 10**9
    times = [center + offset * 10**6 for offset in range(-3000, 3000, 7)]
    times += [center + 1, center + 2]
    for index, mtime in enumerate(times):
        engine(cache, f"e{index:05d}", mtime_ns=mtime, plan_size=1)
    status, plan, result = prune(cache, "--unused-for", "1", "--dry-run")
    assert status == 0
    cutoff = plan["criterion"]["cutoff_ns"]
    assert plan["criterion"]["unused_for_days"] == "1"
    assert abs(cutoff - (time.time_ns() - DAY_NS)) < 60 * 10**9
    expected = sorted(
        (entry["recorded_at_ns"], entry["file_name"])
        for entry in cache_list(cache)["entries"]
        if entry["recorded_at_ns"] < cutoff
    )
    assert [(e["recorded_at_ns"], e["file_name"]) for e in plan["selected"]] == expected
    assert 0 < len(expected) < len(times)
    assert result["removed"] == []


def test_unused_for_accepts_fractional_days(cache: Path) -> None:
    hour = 3600 * 10**9
    older = engine(cache, "older", mtime_ns=NOW_NS - 13 * hour)
    newer = engine(cache, "newer", mtime_ns=NOW_NS - 11 * hour)
    status, plan, result = prune(cache, "--unused-for", "0.5")
    assert status == 0
    assert names(plan["selected"]) == [older.name]
    assert names(result["removed"]) == [older.name]
    assert not older.exists()
    assert newer.exists()


def test_unused_for_zero_selects_everything_recorded_before_now(cache: Path) -> None:
    past = engine(cache, "past", mtime_ns=NOW_NS - 10**9)
    future = engine(cache, "future", mtime_ns=NOW_NS + 3600 * 10**9)
    _, plan, _ = prune(cache, "--unused-for", "0", "--dry-run")
    assert names(plan["selected"]) == [past.name]
    assert future.exists()


def test_prune_removes_engines_and_keeps_records_and_leftovers(cache: Path, tmp_path: Path) -> None:
    weights = tmp_path / "w.safetensors"
    weights.write_bytes(b"w")
    record = write_weight_record(cache, weights, sha256_hex(b"w"))
    old = engine(cache, "old", mtime_ns=NOW_NS - 40 * DAY_NS)
    new = engine(cache, "new", mtime_ns=NOW_NS - DAY_NS)
    empty = write_file(cache / "empty.engine", b"", NOW_NS - 40 * DAY_NS)
    junk = write_file(cache / "junk.engine", b"garbage", NOW_NS - 40 * DAY_NS)
    tmp = write_file(cache / "new.engine.tmp-1-ab", b"partial", NOW_NS - 40 * DAY_NS)
    old_size = old.stat().st_size

    status, plan, result = prune(cache, "--unused-for", "30")

    assert status == 0
    assert names(plan["selected"]) == [old.name]
    assert names(plan["excluded"]) == ["empty.engine", "junk.engine", "new.engine.tmp-1-ab"]
    assert "rebuilt" in plan["notice"]
    assert plan["dry_run"] is False
    assert names(result["removed"]) == [old.name]
    assert names(result["excluded"]) == names(plan["excluded"])
    assert result["failed"] == []
    assert result["missing"] == []
    assert result["bytes_removed"] == old_size
    remaining = [new, empty, junk, tmp]
    assert result["remaining_total_bytes"] == sum(path.stat().st_size for path in remaining)
    assert "projected_total_bytes" not in result
    assert not old.exists()
    for path in [*remaining, record]:
        assert path.exists()


# --- prune --max-size -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("1536", 1536),
        ("1.9", 1),
        ("0.5B", 0),
        ("2kib", 2048),
        ("1.5KiB", 1536),
        ("1.5kIb", 1536),
        ("3MIB", 3 << 20),
        ("1.5GiB", 1610612736),
        ("10GiB", 10 << 30),
        ("0.25TiB", 1 << 38),
        ("0.0009765625KiB", 1),
        ("0.0009765624KiB", 0),
        (".5KiB", 512),
    ],
)
def test_max_size_units_case_fractions_and_rounding(cache: Path, text: str, expected: int) -> None:
    status, plan, result = prune(cache, "--max-size", text, "--dry-run")
    assert status == 0
    assert plan["criterion"]["max_size_bytes"] == expected
    assert result["max_size_bytes"] == expected


UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


@settings(max_examples=60, deadline=None)
@given(
    whole=st.integers(min_value=0, max_value=10**7),
    fraction=st.text(alphabet="0123456789", max_size=30),
    unit=st.sampled_from(sorted(UNITS)),
    upper=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_max_size_is_the_exact_rounded_down_product(
    tmp_path_factory: pytest.TempPathFactory,
    whole: int,
    fraction: str,
    unit: str,
    upper: list[bool],
) -> None:
    spelled = "".join(c.upper() if up else c for c, up in zip(unit, upper, strict=False))
    text = f"{whole}.{fraction}{spelled}" if fraction else f"{whole}{spelled}"
    exact = Fraction(f"{whole}.{fraction or '0'}") * UNITS[unit]
    cache = tmp_path_factory.mktemp("cache")
    status, plan, _ = prune(cache, "--max-size", text, "--dry-run")
    assert status == 0
    assert plan["criterion"]["max_size_bytes"] == math.floor(exact)


def test_max_size_removes_oldest_first_with_ties_by_name(cache: Path) -> None:
    newest = engine(cache, "new-0", mtime_ns=NOW_NS - 1 * DAY_NS)
    tie_b = engine(cache, "tie-b", mtime_ns=NOW_NS - 5 * DAY_NS)
    tie_a = engine(cache, "tie-a", mtime_ns=NOW_NS - 5 * DAY_NS)
    middle = engine(cache, "mid-0", mtime_ns=NOW_NS - 3 * DAY_NS)
    size = newest.stat().st_size
    assert all(path.stat().st_size == size for path in (tie_a, tie_b, middle))

    # Fits after removing three files, not two: one byte below the size of two.
    status, plan, result = prune(cache, "--max-size", str(2 * size - 1))
    assert status == 0
    assert names(plan["selected"]) == [tie_a.name, tie_b.name, middle.name]
    assert plan["projected_total_bytes"] == size
    assert result["remaining_total_bytes"] == size
    assert result["within_max_size"] is True
    assert [path.exists() for path in (newest, tie_a, tie_b, middle)] == [True, False, False, False]


def test_max_size_equal_to_the_total_removes_nothing(cache: Path) -> None:
    first = engine(cache, "a", mtime_ns=NOW_NS - DAY_NS)
    second = engine(cache, "b", mtime_ns=NOW_NS)
    total = first.stat().st_size + second.stat().st_size
    status, plan, _ = prune(cache, "--max-size", str(total))
    assert status == 0
    assert plan["selected"] == []
    _, plan, _ = prune(cache, "--max-size", str(total - 1), "--dry-run")
    assert names(plan["selected"]) == [first.name]


def test_max_size_counts_empty_unrecognized_and_temporary_files_but_keeps_them(cache: Path) -> None:
    old = engine(cache, "old", mtime_ns=NOW_NS - 9 * DAY_NS)
    new = engine(cache, "new", mtime_ns=NOW_NS)
    keep = [
        write_file(cache / "empty.engine", b"", 0),
        write_file(cache / "junk.engine", b"j" * 1000, 0),
        write_file(cache / "old.engine.tmp-99-ff", b"t" * 500, 0),
    ]
    leftovers = 1500
    limit = leftovers + new.stat().st_size
    total = leftovers + old.stat().st_size + new.stat().st_size
    status, plan, result = prune(cache, "--max-size", str(limit))
    assert status == 0
    assert names(plan["selected"]) == [old.name]
    assert plan["total_size_bytes"] == total
    assert set(names(result["excluded"])) == {path.name for path in keep}
    assert result["remaining_total_bytes"] == limit
    assert all(path.exists() for path in [*keep, new])


def test_an_unattainable_size_exits_1_after_reporting(cache: Path) -> None:
    old = engine(cache, "old", mtime_ns=NOW_NS - DAY_NS)
    junk = write_file(cache / "junk.engine", b"j" * 1000, 0)

    status, plan, result = prune(cache, "--max-size", "999", "--dry-run")
    assert status == 1
    assert plan["attainable"] is False
    assert result["within_max_size"] is False
    assert result["projected_total_bytes"] == 1000
    assert old.exists()

    status, plan, result = prune(cache, "--max-size", "999")
    assert status == 1
    assert names(result["removed"]) == [old.name]
    assert result["remaining_total_bytes"] == 1000
    assert result["within_max_size"] is False
    assert junk.exists()


# --- dry run ----------------------------------------------------------------------------------


@pytest.mark.parametrize("criterion", [("--unused-for", "1"), ("--max-size", "0")])
def test_dry_run_changes_nothing_and_projects_the_total(
    cache: Path, criterion: tuple[str, str]
) -> None:
    first = engine(cache, "a", mtime_ns=NOW_NS - 3 * DAY_NS)
    second = engine(cache, "b", mtime_ns=NOW_NS - 2 * DAY_NS)
    write_file(cache / "empty.engine", b"", 0)
    before = snapshot(cache)

    status, plan, result = prune(cache, *criterion, "--dry-run")

    assert status == 0
    assert snapshot(cache) == before
    assert not any(path.name.endswith(".lock") for path in cache.iterdir())
    assert plan["dry_run"] is True
    assert names(plan["selected"]) == [first.name, second.name]
    assert result["dry_run"] is True
    assert result["removed"] == []
    assert result["bytes_removed"] == 0
    total = first.stat().st_size + second.stat().st_size
    assert result["remaining_total_bytes"] == total
    assert result["projected_total_bytes"] == 0
    assert plan["projected_total_bytes"] == 0


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


# --- verify -----------------------------------------------------------------------------------


def test_verify_reports_damaged_plans_and_changes_nothing(cache: Path) -> None:
    good = engine(cache, "good", mtime_ns=NOW_NS - DAY_NS)
    bad = engine(cache, "bad", mtime_ns=NOW_NS - DAY_NS)
    data = bytearray(bad.read_bytes())
    data[-1] ^= 0xFF
    bad.write_bytes(bytes(data))
    set_mtime_ns(bad, NOW_NS - DAY_NS)
    write_file(cache / "empty.engine", b"")
    before = snapshot(cache)

    completed = run("cache", "verify", "--cache-dir", str(cache))

    assert completed.returncode == 1
    report = json.loads(completed.stdout)
    assert snapshot(cache) == before
    assert names(report["damaged"]) == [bad.name]
    assert (
        "SHA-256" in report["damaged"][0]["reason"] or "checksum" in report["damaged"][0]["reason"]
    )
    statuses = {entry["file_name"]: entry["status"] for entry in report["entries"]}
    assert statuses == {good.name: "intact", bad.name: "damaged", "empty.engine": "skipped"}

    bad.unlink()
    completed = run("cache", "verify", "--cache-dir", str(cache))
    assert completed.returncode == 0
    assert json.loads(completed.stdout)["damaged"] == []
