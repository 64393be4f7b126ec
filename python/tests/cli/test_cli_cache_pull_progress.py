"""`tensoracle cache pull` draws a download bar on stderr for objects over 4 MiB when stderr is a
terminal (a pseudo-terminal here, as a person's shell gives it), none with --quiet, and none when
stderr is not a terminal; stdout's report is the same in every case. Against the real S3 server.
"""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import threading
from pathlib import Path

import pytest
from cache_cli import run, tensoracle_executable
from engine_files import write_engine
from remote_support import Fleet, in_process_fleet
from rich.console import Console

from tensoracle import _core
from tensoracle.cache.remote.config import configure
from tensoracle.cache.remote.fleet import receive
from tensoracle.cache.remote.objects import RemoteObjects, engine_key
from tensoracle.cli.transfer_progress import SHOWN_FROM_BYTES, TransferProgress
from tensoracle.errors import CorruptEngineError

pytestmark = pytest.mark.slow


def publish(fleet: Fleet, root: Path) -> tuple[Path, Path]:
    """(a 5 MiB engine, a small one), both published under the fleet's prefix."""
    source = root / "source"
    source.mkdir()
    large = write_engine(source, {"name": "large", "graph_version": "1"}, plan=b"L" * (5 << 20))
    small = write_engine(source, {"name": "small", "graph_version": "1"}, plan=b"s" * 1000)
    assert large.stat().st_size > SHOWN_FROM_BYTES > small.stat().st_size
    for engine in (large, small):
        fleet.replace(f"engines/{engine.name}", engine.read_bytes())
    return large, small


def run_on_terminal(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """(exit status, stdout, what reached the terminal) of ``tensoracle ARGS`` whose stderr is a
    pseudo-terminal."""
    controller, terminal = pty.openpty()
    drawn = bytearray()

    def drain() -> None:
        while True:
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: every end of the terminal is closed
                return
            if not data:
                return
            drawn.extend(data)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        completed = subprocess.run(
            [tensoracle_executable(), *args],
            stdout=subprocess.PIPE,
            stderr=terminal,
            env={**env, "TERM": "xterm-256color", "COLUMNS": "120"},
            timeout=120,
            check=False,
        )
    finally:
        os.close(terminal)
        reader.join(timeout=30)
        os.close(controller)
    return completed.returncode, completed.stdout.decode(), drawn.decode("utf-8", "replace")


def test_a_terminal_shows_the_large_download_and_quiet_shows_none(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    env = fleet.environment("cli")
    large, small = publish(fleet, tmp_path)

    status, stdout, drawn = run_on_terminal(
        "cache", "pull", "--cache-dir", str(tmp_path / "shown"), env=env
    )
    assert status == 0, drawn
    report = json.loads(stdout)
    assert [item["file_name"] for item in report["pulled"]] == sorted([large.name, small.name])
    assert large.name in drawn
    assert small.name not in drawn  # under 4 MiB: no bar
    assert "5.2/5.2 MB" in drawn  # the bar's last state: every byte arrived
    assert (tmp_path / "shown" / large.name).read_bytes() == large.read_bytes()

    status, quiet_stdout, quiet_drawn = run_on_terminal(
        "cache", "pull", "--quiet", "--cache-dir", str(tmp_path / "quiet"), env=env
    )
    assert status == 0, quiet_drawn
    assert quiet_drawn == ""
    assert json.loads(quiet_stdout)["pulled"] == report["pulled"]


def test_no_terminal_no_progress(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    env = fleet.environment("cli")
    large, _small = publish(fleet, tmp_path)
    pulled = run("cache", "pull", large.name, "--cache-dir", str(tmp_path / "target"), env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert pulled.stderr == ""
    assert [item["file_name"] for item in json.loads(pulled.stdout)["pulled"]] == [large.name]


def test_the_bar_follows_the_bytes_fed_and_a_refusal_removes_it(
    s3_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    fleet = in_process_fleet(s3_server, tmp_path, monkeypatch)
    large, _small = publish(fleet, tmp_path)
    config = configure(fleet.url)
    assert config is not None
    objects = RemoteObjects(config)
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    store = _core.Store(str(tmp_path / "target"))

    with TransferProgress(console=console) as progress:
        with store.lock_entry(large.name, True):
            received = receive(
                objects,
                engine_key(large.name),
                large.name,
                None,
                None,
                store,
                progress.counted(large.name),
            )
        assert received is not None
        [task] = progress.tasks  # what the bar shows
        assert (task.completed, task.total) == (large.stat().st_size,) * 2

        # Not an engine: the receiver refuses it by its first bytes, and the bar goes.
        fleet.replace(f"engines/{large.name}", b"\0" * (SHOWN_FROM_BYTES + 1))
        with (
            pytest.raises(CorruptEngineError, match="not a tensoracle engine"),
            store.lock_entry("other.engine", True),
        ):
            receive(
                objects,
                engine_key(large.name),
                "other.engine",
                None,
                None,
                store,
                progress.counted("other.engine", lambda receiver: receiver),
            )
        assert [task.description for task in progress.tasks] == [large.name]
    assert large.name in screen.getvalue()
    assert "\x1b[" in screen.getvalue()  # drawn for a terminal


class _Sized:
    def __init__(self, size: int) -> None:
        self.object_size = size


def test_quiet_or_small_objects_are_fed_as_they_are():
    console = Console(file=io.StringIO(), force_terminal=True)
    large = _Sized(SHOWN_FROM_BYTES * 2)
    assert TransferProgress(quiet=True, console=console).counted("x")(large) is large
    small = _Sized(SHOWN_FROM_BYTES - 1)
    with TransferProgress(console=console) as progress:
        assert progress.counted("x")(small) is small
