"""Engines published to a test's share of the S3 server with the manifest entries that name them,
as `tensoracle build --push --manifest` would write them (the entry's digests and, for a signed
object, its signature), for the tests of the pulls that read them."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from cache_cli import tensoracle_executable
from engine_files import engine_file_bytes, plan_checksum_hex
from remote_support import Fleet

from tensoracle import _core

REFERENCES = {"built_at": "2026-12-01T00:00:00Z"}


def engine_bytes(name: str, plan: bytes, references: dict[str, Any] | None = None) -> bytes:
    """A valid engine file of an RTX entry named `name` for sm89 holding `plan`."""
    conditions = {"name": name, "graph_version": "1", "backend": "tensorrt_rtx",
                  "backend_version": "1.7.1.116", "gpu": None, "targets": ["sm89"]}  # fmt: skip
    return engine_file_bytes(conditions, REFERENCES if references is None else references, plan)


def conditions_of(engine: bytes) -> dict[str, Any]:
    conditions: dict[str, Any] = _core.decode_engine_header(engine, len(engine), "engine")[0]
    return conditions


def entry_of(fleet: Fleet, engine: bytes, signing: Any = None) -> dict[str, Any]:
    """The manifest entry of `engine`, published (signed with `signing`) under its key."""
    conditions = conditions_of(engine)
    name = _core.recorded_identity(conditions).file_name
    key = f"engines/{name}"
    prefix = engine[: _core.engine_prefix_bytes(engine[: _core.ENGINE_PREAMBLE_BYTES])]
    plan = engine[len(prefix) :]
    trailer = b"" if signing is None else _core.signature_trailer(signing, name, engine)
    fleet.replace(key, engine + trailer)
    signature = trailer[: _core.SIGNATURE_TRAILER_BYTES - 8].hex() if trailer else None
    return {
        "recipe": conditions["name"], "graph_version": "1", "file_name": name,
        "conditions": conditions, "backend": "tensorrt_rtx", "backend_version": "1.7.1.116",
        "targets": ["sm89"], "hardware_compatibility": None, "io": None,
        "plan": {"size": len(plan), "xxh3_128": plan_checksum_hex(plan)},
        "engine_bytes": len(engine), "sha256": hashlib.sha256(engine).hexdigest(),
        "header_sha256": hashlib.sha256(prefix).hexdigest(),
        "fleet": {"key": key, "url": f"{fleet.url}/{key}", "signed": signing is not None,
                  "signature": signature},
    }  # fmt: skip


def write_manifest(path: Path, fleet: Fleet, entries: list[dict[str, Any]]) -> Path:
    """A plain manifest of `entries` whose remote cache is the fleet's."""
    path.write_text(json.dumps({"schema_version": 1, "spec": "model:RECIPES",
                                "remote": fleet.url, "entries": entries}))  # fmt: skip
    return path


def sign(manifest: Path, signing: Path) -> None:
    """Signs the manifest in place with the key file `signing` (`tensoracle manifest sign`)."""
    signed = subprocess.run(
        [tensoracle_executable(), "manifest", "sign", str(manifest), "--key", str(signing)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert signed.returncode == 0, signed.stderr
