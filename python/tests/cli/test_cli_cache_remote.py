"""`tensoracle cache push|pull` and `cache list|prune --remote` against the real S3 server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cache_cli import run
from engine_files import write_engine, write_file
from remote_support import Fleet, make_keys

pytestmark = pytest.mark.slow


def lines(completed) -> list[dict]:
    return [json.loads(line) for line in completed.stdout.splitlines()]


def names(entries: list[dict]) -> list[str]:
    return [entry["file_name"] for entry in entries]


def test_push_list_pull_and_prune(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    env = fleet.environment("cli")
    source = tmp_path / "source"
    source.mkdir()
    alpha = write_engine(source, {"name": "alpha", "graph_version": "1"}, plan=b"a" * 1000)
    beta = write_engine(source, {"name": "beta", "graph_version": "2"}, plan=b"b" * 2000)
    write_file(source / "broken.engine", b"hello")

    pushed = run("cache", "push", "--cache-dir", str(source), env=env)
    assert pushed.returncode == 1, pushed.stderr  # the broken entry failed, the others went
    [report] = lines(pushed)
    assert report["remote"] == fleet.url
    assert names(report["pushed"]) == [alpha.name, beta.name]
    assert names(report["failed"]) == ["broken.engine"]
    assert "not a tensoracle engine file" in report["failed"][0]["reason"]
    assert fleet.read(f"engines/{alpha.name}") == alpha.read_bytes()

    again = run("cache", "push", alpha.name, "--cache-dir", str(source), env=env)
    assert again.returncode == 0, again.stderr
    assert names(lines(again)[0]["already_present"]) == [alpha.name]

    listed = run("cache", "list", "--remote", env=env)
    assert listed.returncode == 0, listed.stderr
    [listing] = lines(listed)
    assert names(listing["entries"]) == [alpha.name, beta.name]
    assert [entry["size_bytes"] for entry in listing["entries"]] == [
        alpha.stat().st_size,
        beta.stat().st_size,
    ]
    assert listing["total_size_bytes"] == alpha.stat().st_size + beta.stat().st_size
    assert listing["entries"][1]["conditions"] == {"name": "beta", "graph_version": "2"}
    assert {entry["status"] for entry in listing["entries"]} == {"recognized"}
    assert {entry["signed"] for entry in listing["entries"]} == {False}
    table = run("cache", "list", "--remote", fleet.url, "--format", "table", env=env)
    assert table.returncode == 0, table.stderr
    assert "alpha" in table.stdout
    assert "2 entries" in table.stdout

    target = tmp_path / "target"
    pulled = run("cache", "pull", "--cache-dir", str(target), env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert names(lines(pulled)[0]["pulled"]) == [alpha.name, beta.name]
    assert (target / alpha.name).read_bytes() == alpha.read_bytes()
    assert (target / beta.name).read_bytes() == beta.read_bytes()
    repeat = run("cache", "pull", "--cache-dir", str(target), env=env)
    assert names(lines(repeat)[0]["already_present"]) == [alpha.name, beta.name]

    dry = run(
        "cache", "prune", "--remote", "--max-size", str(beta.stat().st_size), "--dry-run", env=env
    )
    assert dry.returncode == 0, dry.stderr
    plan, result = (document for document in lines(dry))
    assert names(plan["plan"]["selected"]) == [alpha.name]
    assert result["result"]["dry_run"] is True
    assert result["result"]["removed"] == []
    assert len([key for key in fleet.object_keys() if key.startswith("engines/")]) == 2

    pruned = run("cache", "prune", "--remote", "--unused-for", "0", env=env)
    assert pruned.returncode == 0, pruned.stderr
    plan, result = (document for document in lines(pruned))
    assert names(result["result"]["removed"]) == [alpha.name, beta.name]
    assert result["result"]["remaining_total_bytes"] == 0
    assert lines(run("cache", "list", "--remote", env=env))[0]["entries"] == []
    assert (target / alpha.name).exists()  # local copies stay


def test_pull_refuses_damaged_and_untrusted_objects(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "k")
    env = fleet.environment(
        "cli", TENSORACLE_REMOTE_SIGNING_KEY=str(signing), TENSORACLE_REMOTE_VERIFY_KEY=str(verify)
    )
    source = tmp_path / "source"
    source.mkdir()
    good = write_engine(source, {"name": "good", "graph_version": "1"}, plan=b"g" * 100)
    bad = write_engine(source, {"name": "bad", "graph_version": "1"}, plan=b"x" * 100)
    assert run("cache", "push", "--cache-dir", str(source), env=env).returncode == 0
    assert lines(run("cache", "list", "--remote", env=env))[0]["entries"][0]["signed"] is True
    damaged = bytearray(fleet.read(f"engines/{bad.name}"))
    damaged[30] ^= 0x20
    fleet.replace(f"engines/{bad.name}", bytes(damaged))

    target = tmp_path / "target"
    pulled = run("cache", "pull", "--cache-dir", str(target), env=env)

    assert pulled.returncode == 1
    [report] = lines(pulled)
    assert names(report["pulled"]) == [good.name]
    assert names(report["refused"]) == [bad.name]
    assert f"engines/{bad.name}" in report["refused"][0]["reason"]
    assert not (target / bad.name).exists()


def test_usage_errors_exit_2(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    env = fleet.environment("cli")
    missing = run("cache", "prune", "--remote", env=env)
    assert missing.returncode == 2
    assert "exactly one of" in missing.stderr
    bad_size = run("cache", "prune", "--remote", "--max-size", "10GB", env=env)
    assert bad_size.returncode == 2
    assert "10GB" in bad_size.stderr
    off = run("cache", "push", env={**env, "TENSORACLE_REMOTE": ""})
    assert off.returncode == 2
    assert "TENSORACLE_REMOTE" in off.stderr
    helped = run("cache", "push", "--help", env=env)
    assert helped.returncode == 0
    assert "usage: tensoracle cache push" in helped.stdout
