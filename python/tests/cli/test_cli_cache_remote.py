"""`tensoracle cache push|pull` and `cache list|prune --remote` against the real S3 server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cache_cli import run
from cutting_proxy import counting_proxy
from engine_files import write_engine, write_file
from remote_support import Fleet, make_keys, store_files

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
    bad_size = run("cache", "prune", "--remote", "--max-size", "10G", env=env)
    assert bad_size.returncode == 2
    assert "10G" in bad_size.stderr
    off = run("cache", "push", env={**env, "TENSORACLE_REMOTE": ""})
    assert off.returncode == 2
    assert "TENSORACLE_REMOTE" in off.stderr
    helped = run("cache", "push", "--help", env=env)
    assert helped.returncode == 0
    assert "usage: tensoracle cache push" in helped.stdout


# Streamed pulls: an object goes into the store's temporary file as it arrives and is judged from
# its first bytes, so an object refused by its preamble or header is never read whole.

JUNK_BYTES = 64 << 20


def junk_object(kind: str, tmp_path: Path) -> tuple[str, bytes]:
    """(entry file name, object) that a writer to the bucket put there: no engine at all, or an
    engine file whose header announces far fewer bytes than the object holds."""
    if kind == "preamble":
        return "junk-0.engine", b"\x00" * JUNK_BYTES
    source = tmp_path / "source"
    source.mkdir()
    engine = write_engine(source, {"name": "padded", "graph_version": "1"}, plan=b"p" * 100)
    return engine.name, engine.read_bytes() + b"\x00" * JUNK_BYTES


@pytest.mark.parametrize("kind", ["preamble", "header"])
def test_pull_of_an_object_refused_by_its_start_reads_only_its_start(
    s3_server, tmp_path: Path, kind: str
):
    fleet = Fleet(s3_server, tmp_path)
    name, data = junk_object(kind, tmp_path)
    fleet.replace(f"engines/{name}", data)
    target = tmp_path / "target"

    with counting_proxy(s3_server.port) as relay:
        env = fleet.environment("cli", AWS_ENDPOINT_URL=relay.endpoint)
        pulled = run("cache", "pull", name, "--cache-dir", str(target), env=env)
        served = relay.served

    assert pulled.returncode == 1, pulled.stderr
    [report] = lines(pulled)
    assert report["pulled"] == []
    [refused] = report["refused"]
    assert refused["file_name"] == name
    assert f"{fleet.url}/engines/{name}" in refused["reason"]
    expected = "not a tensoracle engine file" if kind == "preamble" else "its header announces"
    assert expected in refused["reason"]
    assert store_files(target) == []  # no temporary file, nothing saved
    # What the server sent before the client stopped reading: the first chunks and what the
    # sockets buffer (a few MiB), not the whole object as a pull that reads it all would.
    assert 0 < served < JUNK_BYTES // 2, served


def test_pull_saves_a_valid_object_intact_and_reports_it_in_a_table(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    env = fleet.environment("cli")
    source = tmp_path / "source"
    source.mkdir()
    plan = bytes(range(256)) * (12 << 12)  # 12 MiB: several chunks
    good = write_engine(source, {"name": "good", "graph_version": "1"}, plan=plan)
    fleet.replace(f"engines/{good.name}", good.read_bytes())
    fleet.replace("engines/bad-0.engine", b"\x00" * 1000)
    target = tmp_path / "target"

    pulled = run("cache", "pull", "--cache-dir", str(target), "--format", "table", env=env)
    again = run(
        "cache", "pull", good.name, "--cache-dir", str(target), "--format", "table", env=env
    )

    assert pulled.returncode == 1, pulled.stderr  # bad-0.engine was refused
    rows = [line.split() for line in pulled.stdout.splitlines()]
    assert rows[0] == ["NAME", "OUTCOME", "SIZE", "SIGNED", "REASON"]
    assert rows[1][0] == "bad-0.engine"
    assert rows[1][1] == "refused"
    assert "not a tensoracle engine file" in pulled.stdout.splitlines()[1]
    assert rows[2][:2] == [good.name, "pulled"]
    assert rows[2][-1] == "no"
    assert pulled.stdout.splitlines()[3] == (
        f"1 pulled, 0 already present, 1 refused, from {fleet.url} into {target}"
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[1].split() == [good.name, "already", "present", "-", "-"]
    assert store_files(target) == [good.name]
    assert (target / good.name).read_bytes() == good.read_bytes()
    verified = run("cache", "verify", "--cache-dir", str(target), env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_pull_by_name_judges_what_is_already_at_an_entrys_name(s3_server, tmp_path: Path):
    """A link, a FIFO or a folder at an entry's name is refused at once, never followed or waited
    on; so is a saved file whose header records another entry's conditions. A sound entry is
    reported present, and none of them is replaced or removed."""
    fleet = Fleet(s3_server, tmp_path)
    env = fleet.environment("cli")
    source = tmp_path / "source"
    source.mkdir()
    alpha = write_engine(source, {"name": "alpha", "graph_version": "1"}, plan=b"a" * 1000)
    beta = write_engine(source, {"name": "beta", "graph_version": "1"}, plan=b"b" * 1000)
    assert run("cache", "push", "--cache-dir", str(source), env=env).returncode == 0
    target = tmp_path / "target"
    target.mkdir()
    elsewhere = tmp_path / "elsewhere.engine"
    elsewhere.write_bytes(alpha.read_bytes())
    cases = {
        "a link": lambda path: path.symlink_to(elsewhere),
        "a FIFO": lambda path: os.mkfifo(path),
        "a folder": lambda path: path.mkdir(),
        "another entry's file": lambda path: path.write_bytes(beta.read_bytes()),
    }
    for what, plant in cases.items():
        path = target / alpha.name
        plant(path)
        pulled = run("cache", "pull", alpha.name, "--cache-dir", str(target), env=env)
        assert pulled.returncode == 1, (what, pulled.stdout, pulled.stderr)
        [report] = lines(pulled)
        assert report["already_present"] == [], what
        [refused] = report["refused"]
        assert refused["file_name"] == alpha.name
        assert str(path) in refused["reason"], (what, refused["reason"])
        assert os.path.lexists(path), what  # left as it was
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
    assert elsewhere.read_bytes() == alpha.read_bytes()
    pulled = run("cache", "pull", alpha.name, "--cache-dir", str(target), env=env)
    assert names(lines(pulled)[0]["pulled"]) == [alpha.name]
    again = run("cache", "pull", alpha.name, "--cache-dir", str(target), env=env)
    assert again.returncode == 0, again.stderr
    assert names(lines(again)[0]["already_present"]) == [alpha.name]
