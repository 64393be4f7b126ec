"""Helpers of the remote cache tests: a fresh prefix per test, nodes as separate processes,
direct access to the bucket (as someone with write access), and Ed25519 key files."""

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
from obstore.store import S3Store
from s3_server import CephS3

HERE = Path(__file__).parent


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
