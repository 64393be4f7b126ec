"""Helpers of the remote cache tests: a fresh prefix per test, nodes as separate processes or the
test's own process (``in_process_fleet``), direct access to the bucket (as someone with write
access), the files of a store's directory, and Ed25519 key files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import obstore  # tensoracle[remote]: make test installs it, so its absence fails
import pytest
from obstore.store import S3Store
from s3_server import CephS3

HERE = Path(__file__).parent

# The references of the engines the remote tests save (what a build records).
REFERENCES = {"built_at": "2026-12-01T00:00:00Z", "workspace_limit": None}


@dataclass
class Fleet:
    """One test's share of the server: its own prefix, weights, and per-node cache dirs."""

    server: CephS3
    root: Path
    prefix: str = field(default_factory=lambda: f"fleet-{uuid.uuid4().hex[:10]}")

    @property
    def url(self) -> str:
        return f"s3://{self.server.bucket}/{self.prefix}"

    @property
    def weights(self) -> Path:
        return self.root / "model.safetensors"

    @property
    def calls(self) -> Path:
        return self.root / "graph-calls.log"

    def graph_calls(self) -> int:
        return len(self.call_times())

    def call_times(self) -> list[float]:
        """When each node called the graph (Unix seconds), in order."""
        if not self.calls.exists():
            return []
        return [float(line.split()[1]) for line in self.calls.read_text().splitlines()]

    def environment(self, node: str, **extra: str) -> dict[str, str]:
        environment = {
            **os.environ,
            **self.server.environment(),
            "XDG_CACHE_HOME": str(self.root / node),
            "TENSORACLE_REMOTE": self.url,
            "TENSORACLE_REMOTE_CONNECT_SECONDS": "2",
            "TENSORACLE_REMOTE_TIMEOUT_SECONDS": "30",
            "PYTHONPATH": str(HERE),
        }
        environment.update(extra)
        return environment

    def cache(self, node: str) -> Path:
        return self.root / node / "tensoracle"

    def start(self, node: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, str(HERE / "remote_node.py"), str(self.weights), str(self.calls)],
            env=self.environment(node, **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, node: str, **extra: str) -> dict[str, Any]:
        return finish(self.start(node, **extra))

    def bucket(self) -> S3Store:
        """The bucket under this test's prefix, for reading and tampering like a writer would."""
        return S3Store(
            self.server.bucket,
            prefix=self.prefix,
            endpoint=self.server.endpoint,
            access_key_id=self.server.access_key,
            secret_access_key=self.server.secret_key,
            region="us-east-1",
            client_options={"allow_http": True},
        )

    def object_keys(self) -> list[str]:
        return sorted(meta["path"] for batch in obstore.list(self.bucket()) for meta in batch)

    def read(self, key: str) -> bytes:
        return bytes(obstore.get(self.bucket(), key).bytes())

    def replace(self, key: str, data: bytes) -> None:
        obstore.put(self.bucket(), key, data)


def finish(process: subprocess.Popen[str], timeout: float = 300) -> dict[str, Any]:
    stdout, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, stderr
    return json.loads(stdout.strip().splitlines()[-1])


def make_keys(directory: Path, name: str) -> tuple[Path, Path]:
    """(signing key, verify key) PEM files made with the commands the docs give users."""
    signing, verify = directory / f"{name}-signing.pem", directory / f"{name}-verify.pem"
    subprocess.run(
        ["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(signing)], check=True
    )
    subprocess.run(
        ["openssl", "pkey", "-in", str(signing), "-pubout", "-out", str(verify)], check=True
    )
    return signing, verify


def in_process_fleet(
    server: CephS3, root: Path, monkeypatch: pytest.MonkeyPatch, **extra: str
) -> Fleet:
    """A Fleet for tests that use the remote cache from this process: the server's AWS_*
    variables set, no signing or verify key configured, 2 s to connect and 30 s per request
    (and the ``extra`` variables), each undone after the test by ``monkeypatch``."""
    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    for name in ("TENSORACLE_REMOTE_VERIFY_KEY", "TENSORACLE_REMOTE_SIGNING_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TENSORACLE_REMOTE_CONNECT_SECONDS", "2")
    monkeypatch.setenv("TENSORACLE_REMOTE_TIMEOUT_SECONDS", "30")
    for name, value in extra.items():
        monkeypatch.setenv(name, value)
    return Fleet(server, root)


def store_files(directory: str | Path) -> list[str]:
    """Every file in a store's directory but lock files (temporary files included), sorted."""
    return sorted(name for name in os.listdir(directory) if not name.endswith(".lock"))
