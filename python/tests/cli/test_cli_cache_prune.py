"""End-to-end tests of `tensoracle cache prune`: selection by age and size, rounding, dry runs."""

from __future__ import annotations

import json
import math
import os
import re
import time
from fractions import Fraction
from pathlib import Path

import pytest
from cache_cli import DAY_NS, NOW_NS, cache_list, engine, names, prune, run
from engine_files import sha256_hex, snapshot, write_file, write_weight_record
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    directory.mkdir()
    return directory


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
        # A temporary file of a process still running (this one) is kept, however old.
        write_file(cache / f"old.engine.tmp-{os.getpid()}-ff", b"t" * 500, 0),
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


# --- --format table ---------------------------------------------------------------------------


def prune_table(directory: Path, *args: str) -> tuple[int, list[str]]:
    completed = run("cache", "prune", "--cache-dir", str(directory), "--format", "table", *args)
    assert completed.stderr == ""
    return completed.returncode, completed.stdout.splitlines()


def test_the_table_shows_the_plan_then_the_outcome_of_each_removal(cache: Path) -> None:
    old = engine(cache, "old", mtime_ns=NOW_NS - 40 * DAY_NS)
    new = engine(cache, "new", mtime_ns=NOW_NS - DAY_NS)
    write_file(cache / "empty.engine", b"", NOW_NS - 40 * DAY_NS)

    status, lines = prune_table(cache, "--unused-for", "30")

    assert status == 0
    assert not old.exists()
    assert new.exists()
    heading, header, *rest = lines
    assert heading.startswith("plan: remove the engines recorded before ")
    assert heading.endswith(f" (--unused-for 30), in {cache}")
    assert header.split() == ["NAME", "SIZE", "RECORDED_AT", "ACTION"]
    assert rest[0].split()[0] == old.name
    assert rest[0].split()[-1] == "remove"
    assert rest[1].split()[0] == "empty.engine"
    assert rest[1].split()[4] == "keep:"
    assert header.index("ACTION") == rest[0].index("remove") == rest[1].index("keep:")
    assert rest[2].startswith("1 engine selected (")
    assert "rebuilt" in rest[3]
    assert rest[4:] == [
        "result:",
        rest[5],
        rest[6],
        f"1 engine removed ({rest[2].split('(')[1].split(')')[0]}), 0 failed, 0 missing, "
        "0 abandoned temporary files removed (0 B); " + rest[-1].split("; ")[-1],
    ]
    assert rest[5].split() == ["NAME", "OUTCOME"]
    assert rest[6].split() == [old.name, "removed"]
    assert rest[-1].split("; ")[-1].startswith("remaining total ")


def test_the_table_of_a_dry_run_and_of_an_unattainable_size(cache: Path) -> None:
    first = engine(cache, "a", mtime_ns=NOW_NS - 3 * DAY_NS)
    write_file(cache / "junk.engine", b"j" * 1000, 0)
    before = snapshot(cache)

    status, lines = prune_table(cache, "--max-size", "999", "--dry-run")

    assert status == 1  # as with JSON: the limit cannot be met
    assert snapshot(cache) == before
    assert lines[0] == (
        "plan: remove the least recently recorded engines until the total is at most 999 B, "
        f"in {cache} (dry run: nothing is changed)"
    )
    assert lines[2].split()[0] == first.name
    assert lines[-3].endswith("; projected total 1000 B, above the size limit")
    assert lines[-1] == "result: dry run, nothing removed; projected total 1000 B"


def test_the_json_lines_stay_the_default(cache: Path) -> None:
    engine(cache, "a", mtime_ns=NOW_NS - 3 * DAY_NS)
    default = run("cache", "prune", "--cache-dir", str(cache), "--unused-for", "1", "--dry-run")
    chosen = run(
        "cache", "prune", "--cache-dir", str(cache), "--unused-for", "1", "--dry-run",
        "--format", "json",
    )  # fmt: skip
    assert default.returncode == chosen.returncode == 0
    assert [list(json.loads(line)) for line in default.stdout.splitlines()] == [
        ["plan"],
        ["result"],
    ]
    # The same bytes but the cutoff, which moves with the time of the run.
    assert re.sub(r'"cutoff[^,]*,', "", default.stdout) == re.sub(
        r'"cutoff[^,]*,', "", chosen.stdout
    )
