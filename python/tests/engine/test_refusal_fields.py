"""A refusal of the C++ library reaches Python with its fields as attributes: the path of the file
refused, the field inside it, what was observed there and what was expected (None where the
refusal has no such field), beside the unchanged message. The engines here are written in pure
Python (no TensorRT): the refusals come before any plan is deserialized."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from engine_files import engine_file_bytes, plan_checksum_hex
from remote_support import make_keys

from tensoracle import _core
from tensoracle.errors import (
    BundleError,
    EngineCacheError,
    EngineIOError,
    EngineTargetError,
    UntrustedEngineError,
)

RTX_4090 = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
BACKEND, BACKEND_VERSION = "tensorrt_rtx", "1.7.1.116"
CONDITIONS = {"name": "encoder", "graph_version": "1", "backend": BACKEND,
              "backend_version": BACKEND_VERSION, "gpu": None, "targets": ["sm89"]}  # fmt: skip


def io_signature(output_dtype: str) -> dict[str, Any]:
    return {
        "tensors": [
            {"name": "x", "mode": "INPUT", "dtype": "FLOAT", "shape": [1, 3]},
            {"name": "y", "mode": "OUTPUT", "dtype": output_dtype, "shape": [1, 3]},
        ]
    }


def deployed(tmp_path: Path, *, saved_io: dict[str, Any], entry_io: dict[str, Any]) -> Path:
    """A cache folder holding one engine whose header records `saved_io`, and a plain manifest
    whose entry records `entry_io`; returns the manifest."""
    plan = b"plan bytes"
    engine = engine_file_bytes(CONDITIONS, {"io": saved_io}, plan)
    name = _core.recorded_identity(CONDITIONS).file_name
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / name).write_bytes(engine)
    prefix = engine[: _core.engine_prefix_bytes(engine[: _core.ENGINE_PREAMBLE_BYTES])]
    entry = {
        "recipe": "encoder", "graph_version": "1", "file_name": name, "conditions": CONDITIONS,
        "backend": BACKEND, "backend_version": BACKEND_VERSION, "targets": ["sm89"],
        "hardware_compatibility": None, "io": entry_io,
        "plan": {"size": len(plan), "xxh3_128": plan_checksum_hex(plan)},
        "engine_bytes": len(engine), "sha256": hashlib.sha256(engine).hexdigest(),
        "header_sha256": hashlib.sha256(prefix).hexdigest(), "fleet": None,
    }  # fmt: skip
    manifest = tmp_path / "deploy.json"
    manifest.write_text(json.dumps({"schema_version": 1, "spec": "tests:RECIPES",
                                    "remote": None, "entries": [entry]}))  # fmt: skip
    return manifest


def fields(error: BaseException) -> tuple[Any, ...]:
    return tuple(getattr(error, name) for name in ("path", "field", "observed", "expected"))


def test_an_engine_io_refusal_carries_its_fields(tmp_path: Path):
    manifest = deployed(tmp_path, saved_io=io_signature("FLOAT"), entry_io=io_signature("HALF"))
    with pytest.raises(EngineIOError) as refused:
        _core.open_deployed(
            manifest, "encoder", RTX_4090, BACKEND, BACKEND_VERSION, tmp_path / "cache", None
        )
    engine = str(tmp_path / "cache" / _core.recorded_identity(CONDITIONS).file_name)
    assert str(refused.value) == (
        f"deployed engine '{engine}': the saved header's IO signature differs from the "
        "manifest's at io.tensors[1].dtype: FLOAT, the manifest records HALF"
    )
    assert fields(refused.value) == (engine, "io.tensors[1].dtype", "FLOAT", "HALF")
    assert refused.value.remedy is None


def test_a_manifest_refusal_carries_its_fields(tmp_path: Path):
    manifest = deployed(tmp_path, saved_io=io_signature("HALF"), entry_io=io_signature("HALF"))
    document = json.loads(manifest.read_text())
    document["entries"][0]["targets"] = ["sm90"]
    manifest.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="but its conditions record targets") as refused:
        _core.read_trusted_manifest(manifest, tmp_path / "cache")
    assert fields(refused.value) == (
        str(manifest),
        "entries[0].targets",
        '["sm90"]',
        """["sm89"] (the conditions' targets)""",
    )


def test_a_signature_refusal_carries_its_fields(tmp_path: Path):
    manifest = deployed(tmp_path, saved_io=io_signature("HALF"), entry_io=io_signature("HALF"))
    signing, verify = make_keys(tmp_path, "publisher")
    expired = tmp_path / "expired.json"
    expired.write_text(
        _core.sign_manifest(
            manifest.read_text(), str(manifest), 3, "2020-01-01T00:00:00Z", [str(signing)]
        )
    )
    with pytest.raises(UntrustedEngineError, match="expired at 2020-01-01T00:00:00Z") as refused:
        _core.read_trusted_manifest(expired, tmp_path / "cache", verify_key=verify)
    path, field, observed, expected = fields(refused.value)
    assert (path, field, observed) == (str(expired), "predicate.expires", "2020-01-01T00:00:00Z")
    assert expected.startswith("a time after 20")
    assert refused.value.remedy == "ask its publisher for a current one"
    # A plain manifest where a key is given: the refusal has no field, which Python sees as None.
    with pytest.raises(UntrustedEngineError, match="is not signed") as unsigned:
        _core.read_trusted_manifest(manifest, tmp_path / "cache", verify_key=verify)
    assert fields(unsigned.value) == (
        str(manifest),
        None,
        "a manifest that is not signed",
        "a signed manifest",
    )


def test_an_os_error_keeps_its_class_and_errno_and_carries_the_path(tmp_path: Path):
    absent = tmp_path / "absent.json"
    with pytest.raises(FileNotFoundError) as refused:
        _core.read_trusted_manifest(absent, tmp_path / "cache")
    assert refused.value.errno == 2
    assert fields(refused.value) == (str(absent), None, None, None)


@pytest.mark.parametrize("kind", [EngineCacheError, EngineIOError, EngineTargetError, BundleError])
def test_an_error_raised_in_python_has_the_attributes_as_none(kind: type[ValueError]):
    error = kind("refused")
    assert (*fields(error), error.remedy) == (None, None, None, None, None)  # type: ignore[attr-defined]
    assert str(error) == "refused"
