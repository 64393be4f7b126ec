"""End-to-end tests of the installed `tensoracle cache` command: help, usage, list, verify."""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path

import pytest
from cache_cli import DAY_NS, NOW_NS, cache_list, engine, names, prune, run
from engine_files import (
    engine_file_bytes,
    set_mtime_ns,
    sha256_hex,
    snapshot,
    write_engine,
    write_file,
    write_weight_record,
)

from tensoracle.cli import remote_cache


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    directory.mkdir()
    return directory


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


@pytest.mark.parametrize("args", [(), ("cache",), ("manifest",), ("bundle",), ("deploy",)])
def test_help_lists_each_subcommand_on_one_short_line(args: tuple[str, ...]) -> None:
    text = run(*args, "--help").stdout
    listing = text.split("Subcommands:\n", 1)[1]
    too_long = [line for line in listing.splitlines() if len(line) > 100]
    assert too_long == []
    assert len([line for line in listing.splitlines() if line.strip()]) >= 1


def test_a_subcommands_own_help_keeps_its_whole_description() -> None:
    text = run("cache", "prune", "--help").stdout
    assert "temporary file whose writer is gone" in text
    assert "Exit status: 0 success" in text


def test_version_is_the_installed_packages() -> None:
    completed = run("--version")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == f"tensoracle {metadata.version('tensoracle')}\n"


def test_the_cache_folder_option_reads_dir_once_in_help() -> None:
    text = run("cache", "verify", "--help").stdout
    assert "--cache-dir DIR " in text
    assert "DIR:DIR" not in text


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
    ("--max-size", "10G"),
    ("--max-size", ""),
    ("--max-size", "1 GiB"),
    ("--max-size", "18446744073709551616"),
]


@pytest.mark.parametrize(("value", "limit"), [("10GB", 10**10), ("1.5kb", 1500), ("2GiB", 2 << 30)])
def test_max_size_takes_decimal_and_binary_units(cache: Path, value: str, limit: int) -> None:
    status, plan, _result = prune(cache, "--max-size", value, "--dry-run")
    assert status == 0
    assert plan["criterion"] == {"max_size_bytes": limit}


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
    # Engines carry the names the store gives them: a name other than its header's is unrecognized.
    default = write_engine(cache, {"name": "d"}, references={"workspace_limit": None})
    no_reference = write_engine(cache, {"name": "n"})
    write_file(cache / "e.engine", b"")
    write_file(cache / "b-junk.engine", b"this is not an engine")
    truncated = engine_file_bytes({"name": "t"}, plan=b"0123456789")[:-1]
    write_file(cache / "t.engine", truncated)
    write_file(cache / "m.engine.tmp-4242-0a1b2c", b"partial")
    write_file(cache / f"{default.name}.lock", b"")
    write_file(cache / "readme.txt", b"x")
    before = snapshot(cache)

    listing = cache_list(cache)

    assert snapshot(cache) == before, "listing must change nothing"
    assert listing["directory"] == str(cache)
    entries = {entry["file_name"]: entry for entry in listing["entries"]}
    assert names(listing["entries"]) == sorted(entries)
    assert set(entries) == {
        limited.name,
        default.name,
        no_reference.name,
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
    assert entries[default.name]["workspace_limit"] is None
    assert entries[default.name]["recorded_at_ns"] == default.stat().st_mtime_ns
    assert entries[no_reference.name]["workspace_limit"] == "unknown"
    assert entries[no_reference.name]["weight_paths"] == []
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
    write_engine(cache, {"name": "m", "weights": [digest]})
    [entry] = cache_list(cache)["entries"]
    assert entry["weight_paths"] == [{"sha256": digest, "paths": []}]


def test_list_uses_xdg_cache_home_then_home(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "tensoracle").mkdir(parents=True)
    saved = write_engine(xdg / "tensoracle", {"name": "x"})
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    with_xdg = run("cache", "list", env={**env, "XDG_CACHE_HOME": str(xdg)})
    assert with_xdg.returncode == 0, with_xdg.stderr
    listing = json.loads(with_xdg.stdout)
    assert listing["directory"] == str(xdg / "tensoracle")
    assert names(listing["entries"]) == [saved.name]

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
        mtime_ns=0,
    )
    write_file(cache / "z.engine", b"")
    size = table_engine.stat().st_size
    human_size = f"{size // 1024}.{(size % 1024) * 10 // 1024}"
    completed = run("cache", "list", "--cache-dir", str(cache), "--format", "table")
    assert completed.returncode == 0
    header, first, second, total = completed.stdout.splitlines()
    assert header.split() == ["NAME", "GRAPH_VERSION", "SIZE", "RECORDED_AT", "STATUS", "TARGETS"]
    assert first.split() == [
        table_engine.name,
        "7",
        human_size,
        "KiB",
        "1970-01-01T00:00:00Z",
        "recognized",
        "sm86,sm120",
    ]
    assert header.index("STATUS") == first.index("recognized") == second.index("building")
    assert total.startswith("2 entries")


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
    assert "plan checksum mismatch" in report["damaged"][0]["reason"]
    assert "XXH3-128" in report["damaged"][0]["reason"]
    statuses = {entry["file_name"]: entry["status"] for entry in report["entries"]}
    assert statuses == {good.name: "intact", bad.name: "damaged", "empty.engine": "skipped"}

    bad.unlink()
    completed = run("cache", "verify", "--cache-dir", str(cache))
    assert completed.returncode == 0
    assert json.loads(completed.stdout)["damaged"] == []


def test_verify_table_for_people(cache: Path) -> None:
    good = engine(cache, "good", mtime_ns=NOW_NS - DAY_NS)
    bad = engine(cache, "bad", mtime_ns=NOW_NS - DAY_NS)
    data = bytearray(bad.read_bytes())
    data[-1] ^= 0xFF
    bad.write_bytes(bytes(data))
    write_file(cache / "empty.engine", b"")
    report = json.loads(run("cache", "verify", "--cache-dir", str(cache)).stdout)

    completed = run("cache", "verify", "--cache-dir", str(cache), "--format", "table")

    assert completed.returncode == 1  # the same exit status as the JSON report's
    header, *rows, total = completed.stdout.splitlines()
    assert header.split() == ["NAME", "SIZE", "STATUS", "REASON"]
    assert [row.split()[0] for row in rows] == names(report["entries"])
    cells = {row.split()[0]: row for row in rows}
    assert cells[good.name].split()[1:] == [str(good.stat().st_size), "B", "intact"]
    assert cells[bad.name].split()[3] == "damaged"
    assert cells[bad.name].endswith(report["damaged"][0]["reason"])
    assert cells["empty.engine"].split()[1:4] == ["0", "B", "skipped"]
    assert header.index("STATUS") == cells[bad.name].index("damaged")
    assert total == f"3 entries: 1 intact, 1 damaged, 1 skipped, 0 unrecognized, in {cache}"
    assert (
        json.loads(run("cache", "verify", "--cache-dir", str(cache), "--format", "json").stdout)
        == report
    )


def test_the_cache_dir_help_names_the_default_folder_on_linux_and_on_windows():
    text = " ".join(remote_cache.parser("tensoracle cache push", "").format_help().split())
    assert (
        "instead of $XDG_CACHE_HOME/tensoracle (or ~/.cache/tensoracle; on Windows "
        "%USERPROFILE%\\.cache\\tensoracle)" in text
    )
