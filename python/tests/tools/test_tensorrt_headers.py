"""tools/tensorrt_headers.py against a real HTTP server on 127.0.0.1 and local folders: a right set
installs and verifies, a wrong or missing file fails naming it and installs nothing, an install
that verifies is kept (and not fetched again), and the checked-in lock file pins the TensorRT 11.0
and 11.1 releases."""

from __future__ import annotations

import hashlib
import http.server
import json
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPOSITORY / "tools"))

import tensorrt_headers  # noqa: E402 (found in tools/, put on the path above)

VERSION = "11.1.0.106"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_VERSION = "11.0.0.114"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
FILES = {
    "LICENSE": b"Apache License\nVersion 2.0, January 2004\n",
    "include/NvInfer.h": b'#pragma once\n#include "NvInferRuntime.h"\n',
    "include/impl/NvInferPythonPlugin.h": b"#pragma once\nnamespace nvinfer1 {}\n",
}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Server:
    """Serves ROOT/<commit>/<path> and records the paths asked for; `unavailable` paths answer
    503 the first time they are asked for."""

    root: Path
    url: str
    requests: list[str] = field(default_factory=list)
    unavailable: set[str] = field(default_factory=set)

    def publish(self, commit: str, files: dict[str, bytes]) -> None:
        for name, data in files.items():
            path = self.root / commit / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    root = tmp_path / "served"
    root.mkdir()
    state = Server(root, "")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *arguments, **keywords) -> None:
            super().__init__(*arguments, directory=str(root), **keywords)

        def do_GET(self) -> None:
            state.requests.append(self.path)
            if self.path in state.unavailable:
                state.unavailable.discard(self.path)
                self.send_error(503, "Service Unavailable")
                return
            super().do_GET()

        def log_message(self, *arguments) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/NVIDIA/TensorRT"
    state.root = root / "NVIDIA" / "TensorRT"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def write_lock(path: Path, releases: dict[str, tuple[str, dict[str, bytes]]]) -> Path:
    lock = {
        version: {
            "tag": "v" + ".".join(version.split(".")[:2]),
            "commit": commit,
            "files": {name: digest(data) for name, data in files.items()},
        }
        for version, (commit, files) in releases.items()
    }
    path.write_text(json.dumps(lock, indent=2))
    return path


def run_tool(*arguments: str | Path) -> int:
    return tensorrt_headers.main([str(argument) for argument in arguments])


def tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def lock(tmp_path: Path) -> Path:
    return write_lock(tmp_path / "lock.json", {VERSION: (COMMIT, FILES)})


# --- downloads -----------------------------------------------------------------------------------


def test_download_installs_every_pinned_file(tmp_path, server, lock, capsys):
    server.publish(COMMIT, FILES)
    dest = tmp_path / "out" / "tensorrt-headers"
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 0
    assert tree(dest) == {f"{VERSION}/{name}": data for name, data in FILES.items()}
    assert sorted(path.name for path in dest.parent.iterdir()) == ["tensorrt-headers"]
    assert sorted(server.requests) == sorted(f"/NVIDIA/TensorRT/{COMMIT}/{name}" for name in FILES)
    output = capsys.readouterr().out
    assert f"TensorRT {VERSION}: 3 files verified from {server.url}/{COMMIT}" in output
    assert f"installed in {dest / VERSION}" in output

    # A second run finds the install verified: nothing is fetched and nothing changes.
    server.requests.clear()
    assert run_tool("--dest", dest, "--base-url", server.url + "/", "--lock", lock) == 0
    assert server.requests == []
    assert tree(dest) == {f"{VERSION}/{name}": data for name, data in FILES.items()}
    assert f"TensorRT {VERSION}: 3 files already installed and verified" in capsys.readouterr().out


def test_wrong_byte_fails_naming_the_file_and_both_digests(tmp_path, server, lock, capsys):
    wrong = dict(FILES)
    wrong["include/NvInfer.h"] = FILES["include/NvInfer.h"].replace(b"once", b"ONCE")
    server.publish(COMMIT, wrong)
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 1
    assert not dest.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["lock.json", "served"]
    error = capsys.readouterr().err
    assert f"TensorRT {VERSION}: include/NvInfer.h does not match its pin" in error
    assert f"source:   {server.url}/{COMMIT}/include/NvInfer.h" in error
    assert f"expected: sha256 {digest(FILES['include/NvInfer.h'])}" in error
    assert f"observed: sha256 {digest(wrong['include/NvInfer.h'])}" in error
    assert "LICENSE does not match" not in error
    assert "set TENSORRT_HEADERS=DIR" in error
    assert "<version>/include/NvInfer.h" in error
    assert f"commit {COMMIT} (tag v11.1) for {VERSION}" in error


def test_missing_file_fails_naming_the_url(tmp_path, server, lock, capsys):
    server.publish(COMMIT, {name: data for name, data in FILES.items() if name != "LICENSE"})
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 1
    assert not dest.exists()
    error = capsys.readouterr().err
    assert f"TensorRT {VERSION}: LICENSE could not be read" in error
    assert f"source:   {server.url}/{COMMIT}/LICENSE" in error
    assert f"expected: sha256 {digest(FILES['LICENSE'])}" in error
    assert "observed: none (HTTP 404 File not found)" in error
    # A 404 is an answer, not a network failure: asked for once, and the other files still are.
    assert server.requests.count(f"/NVIDIA/TensorRT/{COMMIT}/LICENSE") == 1
    assert len(server.requests) == len(FILES)


def test_server_errors_are_retried(tmp_path, server, lock, monkeypatch):
    monkeypatch.setattr(tensorrt_headers, "RETRY_DELAY_SECONDS", 0.0)
    server.publish(COMMIT, FILES)
    server.unavailable.add(f"/NVIDIA/TensorRT/{COMMIT}/include/NvInfer.h")
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 0
    assert server.requests.count(f"/NVIDIA/TensorRT/{COMMIT}/include/NvInfer.h") == 2
    assert tree(dest / VERSION) == FILES


def test_unreachable_server_stops_after_the_first_file(tmp_path, lock, monkeypatch, capsys):
    monkeypatch.setattr(tensorrt_headers, "RETRY_DELAY_SECONDS", 0.0)
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--base-url", f"http://127.0.0.1:{port}", "--lock", lock) == 1
    assert not dest.exists()
    error = capsys.readouterr().err
    assert error.count("could not be read") == 1
    assert f"tried {tensorrt_headers.ATTEMPTS} times" in error
    assert "The server could not be reached, so no further file was tried." in error


# --- what is already installed -------------------------------------------------------------------


def test_good_install_is_kept_when_a_later_run_fails(tmp_path, server, lock, capsys):
    server.publish(COMMIT, FILES)
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 0
    installed = tree(dest)

    # A new pin for one file that the server does not provide: the run fails and the install
    # made before stays as it was.
    updated = dict(FILES, **{"include/NvInfer.h": b"#pragma once\n// 11.1 update\n"})
    write_lock(lock, {VERSION: (COMMIT, updated)})
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 1
    assert "include/NvInfer.h does not match its pin" in capsys.readouterr().err
    assert tree(dest) == installed

    # A second version whose download fails: the first is kept, the second not installed.
    server.publish(OTHER_COMMIT, {"LICENSE": FILES["LICENSE"]})
    write_lock(lock, {VERSION: (COMMIT, FILES), OTHER_VERSION: (OTHER_COMMIT, FILES)})
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 1
    assert f"TensorRT {OTHER_VERSION}: include/NvInfer.h could not be read" in (
        capsys.readouterr().err
    )
    assert tree(dest) == installed
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dest", "lock.json", "served"]


def test_damaged_install_is_replaced(tmp_path, server, lock):
    server.publish(COMMIT, FILES)
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 0
    (dest / VERSION / "include" / "NvInfer.h").write_bytes(b"edited\n")
    (dest / VERSION / "LICENSE").unlink()
    server.requests.clear()
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 0
    assert len(server.requests) == len(FILES)
    assert tree(dest / VERSION) == FILES
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dest", "lock.json", "served"]


def test_failed_rename_puts_the_previous_install_back(tmp_path, server, lock, monkeypatch, capsys):
    server.publish(COMMIT, FILES)
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 0
    (dest / VERSION / "include" / "NvInfer.h").write_bytes(b"edited\n")
    previous = tree(dest)
    rename = Path.rename

    def refuse_staging(self: Path, target: Path) -> Path:
        if self.name.startswith("."):  # the temporary folder, not the install moved aside
            raise OSError(28, "No space left on device")
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", refuse_staging)
    assert run_tool("--dest", dest, "--base-url", server.url, "--lock", lock) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert tree(dest) == previous
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dest", "lock.json", "served"]


def test_interrupted_write_leaves_no_partial_version(tmp_path, server, lock, monkeypatch):
    server.publish(COMMIT, FILES)
    write_bytes = Path.write_bytes
    written: list[Path] = []

    def interrupt_second(self: Path, data: bytes) -> int:
        if written:
            raise KeyboardInterrupt
        written.append(self)
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", interrupt_second)
    dest = tmp_path / "dest"
    with pytest.raises(KeyboardInterrupt):
        run_tool("--dest", dest, "--base-url", server.url, "--lock", lock)
    assert len(written) == 1
    assert not (dest / VERSION).exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dest", "lock.json", "served"]


# --- --local -------------------------------------------------------------------------------------


def local_copy(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = folder / VERSION / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


def test_local_copy_installs(tmp_path, lock, capsys):
    local = local_copy(tmp_path / "offline", FILES)
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--local", local, "--lock", lock) == 0
    assert tree(dest) == {f"{VERSION}/{name}": data for name, data in FILES.items()}
    assert f"3 files verified from {local / VERSION}" in capsys.readouterr().out


def test_wrong_local_copy_fails_and_installs_nothing(tmp_path, lock, capsys):
    wrong = dict(FILES, **{"include/impl/NvInferPythonPlugin.h": b"#pragma once\n"})
    del wrong["LICENSE"]
    local = local_copy(tmp_path / "offline", wrong)
    dest = tmp_path / "dest"
    assert run_tool("--dest", dest, "--local", local, "--lock", lock) == 1
    assert not dest.exists()
    error = capsys.readouterr().err
    name = "include/impl/NvInferPythonPlugin.h"
    assert f"TensorRT {VERSION}: {name} does not match its pin" in error
    assert f"source:   {local / VERSION / name}" in error
    assert f"expected: sha256 {digest(FILES[name])}" in error
    assert f"observed: sha256 {digest(wrong[name])}" in error
    assert f"TensorRT {VERSION}: LICENSE could not be read" in error
    assert f"source:   {local / VERSION / 'LICENSE'}" in error
    assert "observed: none (no such file)" in error
    assert "set TENSORRT_HEADERS=DIR" in error


# --- usage errors --------------------------------------------------------------------------------


def test_usage_errors_exit_2(tmp_path, lock, capsys):
    with pytest.raises(SystemExit) as exited:
        run_tool("--lock", lock)
    assert exited.value.code == 2
    assert "--dest" in capsys.readouterr().err

    missing = tmp_path / "missing"
    assert run_tool("--dest", tmp_path / "dest", "--local", missing, "--lock", lock) == 2
    assert f"--local {missing}: no such folder" in capsys.readouterr().err

    assert run_tool("--dest", tmp_path / "dest", "--base-url", "ftp://host", "--lock", lock) == 2
    assert "expected an http or https URL" in capsys.readouterr().err

    bad = tmp_path / "bad.json"
    for entry, message in [
        ({"tag": "v11.1", "commit": "HEAD", "files": {}}, "'commit' must be 40 lowercase hex"),
        (
            {"tag": "v11.1", "commit": COMMIT, "files": {"../NvInfer.h": "0" * 64}},
            "file path '../NvInfer.h' is not a plain relative path",
        ),
        (
            {"tag": "v11.1", "commit": COMMIT, "files": {"LICENSE": "abc"}},
            "the SHA-256 of 'LICENSE' must be 64 lowercase hex digits, found 'abc'",
        ),
    ]:
        bad.write_text(json.dumps({VERSION: entry}))
        assert run_tool("--dest", tmp_path / "dest", "--local", tmp_path, "--lock", bad) == 2
        assert f"lock file {bad}, version '{VERSION}': {message}" in capsys.readouterr().err
    assert not (tmp_path / "dest").exists()


# --- the checked-in lock file --------------------------------------------------------------------


def test_lock_file_pins_the_tensorrt_11_releases():
    releases = {r.version: r for r in tensorrt_headers.load_lock(tensorrt_headers.LOCK_FILE)}
    assert {version: (r.tag, r.commit) for version, r in releases.items()} == {
        "11.0.0.114": ("v11.0", "771d8efdf7f9d7b1eeb0864eb05d4dd8a7755bb5"),
        "11.1.0.106": ("v11.1", "82d1dca801c8318a5605399d5240780d0679e4e1"),
    }
    for release in releases.values():
        assert "LICENSE" in release.files
        assert all(name == "LICENSE" or name.startswith("include/") for name in release.files)
    headers = releases["11.1.0.106"].files
    for header in ("NvInfer.h", "NvInferRuntime.h", "NvInferPluginBase.h"):
        assert f"include/{header}" in headers
