"""`cache list|pull|prune --remote` with objects whose keys obstore cannot represent (an empty
path segment, control characters), against the real S3 server: the commands keep working, list
shows each such object as unrecognized under an escaped name, and prune --remote removes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cache_cli import run
from engine_files import write_engine
from raw_upload import put_raw
from remote_support import Fleet

from tensoracle.terminal_text import terminal_text

pytestmark = pytest.mark.slow

ODD = {
    b"engines/sub//x.engine": "sub//x.engine",
    b"engines/ctl\x01name.engine": "ctl\\x01name.engine",
    b"engines/esc\x1b[31m.engine": "esc\\x1b[31m.engine",
    # A backslash is doubled, so the name cannot be mistaken for one holding the byte 0x01.
    b"engines/back\\x01\x02.engine": "back\\\\x01\\x02.engine",
}


def lines(completed) -> list[dict]:
    return [json.loads(line) for line in completed.stdout.splitlines()]


def test_list_pull_and_prune_keep_working_and_prune_removes_odd_keys(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    env = fleet.environment("cli")
    source = tmp_path / "source"
    source.mkdir()
    good = write_engine(source, {"name": "good", "graph_version": "1"}, plan=b"g" * 1000)
    fleet.replace(f"engines/{good.name}", good.read_bytes())
    for key in ODD:
        put_raw(fleet.server, fleet.prefix.encode() + b"/" + key, b"hostile")

    listed = run("cache", "list", "--remote", env=env)
    assert listed.returncode == 0, listed.stderr
    [listing] = lines(listed)
    status = {entry["file_name"]: entry["status"] for entry in listing["entries"]}
    assert status == {good.name: "recognized", **dict.fromkeys(ODD.values(), "unrecognized")}
    assert "\x01" not in listed.stdout
    assert "\x1b" not in listed.stdout
    assert listing["total_size_bytes"] == good.stat().st_size + 7 * len(ODD)
    table = run("cache", "list", "--remote", "--format", "table", env=env)
    assert table.returncode == 0, table.stderr
    # The table shows each name exactly as the JSON listing does: escaped once, never twice.
    for name in ODD.values():
        assert f"\n{name} " in table.stdout
        if "\\" in name:  # the table did not escape the escaped name a second time
            assert terminal_text(name) not in table.stdout
    assert "\x01" not in table.stdout

    target = tmp_path / "target"
    pulled = run("cache", "pull", "--cache-dir", str(target), env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert [item["file_name"] for item in lines(pulled)[0]["pulled"]] == [good.name]
    assert (target / good.name).read_bytes() == good.read_bytes()

    pruned = run("cache", "prune", "--remote", "--unused-for", "0", env=env)
    assert pruned.returncode == 0, pruned.stderr
    plan, result = (
        document[name] for document, name in zip(lines(pruned), ("plan", "result"), strict=True)
    )
    assert sorted(entry["file_name"] for entry in plan["selected"]) == sorted(
        [good.name, *ODD.values()]
    )
    assert result["failed"] == []
    assert result["remaining_total_bytes"] == 0
    assert fleet.object_keys() == []  # obstore itself lists the prefix again
