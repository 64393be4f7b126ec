"""Ctrl-C ends a `tensoracle cache` command at once, even while a request to the store is stalled
(obstore blocks the calling thread in native code until its timeout, 120 s by default): the
command says it was interrupted, exits 130 and leaves no temporary behind. Both stores here are on
127.0.0.1: a port that accepts connections and never answers, and the real S3 server behind a
proxy that stops sending in the middle of an object's body."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cache_cli import tensoracle_executable
from cutting_proxy import stalling_proxy
from engine_files import write_engine
from remote_support import Fleet


@contextlib.contextmanager
def silent_server() -> Iterator[tuple[int, threading.Event]]:
    """A port on 127.0.0.1 that accepts connections and never answers; the event is set once a
    client has connected."""
    listener = socket.create_server(("127.0.0.1", 0))
    connected = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])
                connected.set()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1], connected
    finally:
        listener.close()
        for connection in held:
            connection.close()


def interrupted(
    command: list[str],
    env: dict[str, str],
    started: threading.Event,
    before: Callable[[], None] = lambda: None,
) -> tuple[int, str, float]:
    """Runs ``command``, sends SIGINT once ``started`` is set (and ``before`` has run), and
    returns (exit status, stderr, seconds from the signal to the exit)."""
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal delivers it: a suite started in the background of a shell without
        # job control inherits SIGINT ignored, and so would the command (POSIX keeps an ignored
        # signal ignored across exec), which then rightly goes on.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert started.wait(60), "the command never reached the store"
        time.sleep(0.5)  # well inside the request, which would wait 30 s or more
        before()
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=20)
        return process.returncode, err, time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def saved(cache: Path) -> list[str]:
    """What is in the cache folder besides the entries' lock files, which stay by design."""
    return sorted(path.name for path in cache.iterdir() if not path.name.endswith(".lock"))


def test_ctrl_c_ends_a_pull_whose_store_never_answers(tmp_path: Path):
    with silent_server() as (port, connected):
        env = {
            **os.environ,
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "AWS_ACCESS_KEY_ID": "key",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
            "TENSORACLE_REMOTE_TIMEOUT_SECONDS": "60",
            "TENSORACLE_REMOTE_RETRIES": "0",
        }
        name = "encoder-" + "0" * 64 + ".engine"
        command = [tensoracle_executable(), "cache", "pull", name, "--remote", "s3://bucket"]
        command += ["--cache-dir", str(tmp_path / "cache")]
        status, err, seconds = interrupted(command, env, connected)
    assert status == 130, err
    assert err == "tensoracle cache pull: interrupted\n"
    assert seconds < 5
    assert saved(tmp_path / "cache") == []


@pytest.mark.slow
def test_ctrl_c_ends_a_pull_stalled_mid_body_and_leaves_no_temporary(s3_server, tmp_path: Path):
    fleet = Fleet(s3_server, tmp_path)
    source = tmp_path / "source"
    source.mkdir()
    engine = write_engine(source, {"name": "big", "graph_version": "1"}, plan=os.urandom(8 << 20))
    pushed = subprocess.run(
        [tensoracle_executable(), "cache", "push", "--cache-dir", str(source)],
        env=fleet.environment("pusher"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert pushed.returncode == 0, pushed.stderr
    cache = tmp_path / "target"
    with stalling_proxy(fleet.server.port, 2 << 20) as proxy:  # 2 MiB of the 8, then nothing
        env = fleet.environment("puller", AWS_ENDPOINT_URL=proxy.endpoint)
        env["TENSORACLE_REMOTE_RETRIES"] = "0"
        command = [tensoracle_executable(), "cache", "pull", engine.name, "--cache-dir", str(cache)]

        def a_temporary_is_being_written() -> None:
            assert [name for name in saved(cache) if ".engine.tmp-" in name], saved(cache)

        status, err, seconds = interrupted(
            command, env, proxy.stalled, a_temporary_is_being_written
        )
    assert status == 130, err
    assert err == "tensoracle cache pull: interrupted\n"
    assert seconds < 5
    assert saved(cache) == []  # the temporary, 2 MiB into the object, was removed
