"""open_deployed: a deployed engine found by its manifest and recipe name, without the graph
code, selected and verified by the C++ library before TensorRT sees a byte."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from docs_examples import REPO, python_blocks
from engine_files import plan_checksum_hex
from engine_helpers import (
    DECLARATION,
    IO,
    make_graph,
    skip_where_the_gpu_is_refused,
    write_weights,
)

import tensoracle
from tensoracle import _core, gpu

RTX_4090 = json.dumps({"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"})
H200 = json.dumps({"name": "NVIDIA H200", "compute_capability": "9.0"})


def manifest_entry(recipe: str, path: Path) -> dict[str, Any]:
    """The manifest entry `tensoracle build --manifest` writes for the saved file ``path``."""
    data = path.read_bytes()
    recorded, references, offset = _core.decode_engine_header(data, len(data), str(path))
    return {
        "recipe": recipe,
        "graph_version": recorded["graph_version"],
        "file_name": path.name,
        "conditions": recorded,
        "backend": recorded["backend"],
        "backend_version": recorded["backend_version"],
        "targets": recorded.get("targets"),
        "hardware_compatibility": recorded.get("hardware_compatibility"),
        "io": references["io"],
        "plan": {
            "size": len(data) - offset,
            "xxh3_128": plan_checksum_hex(data[offset:]),
        },
        "engine_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "header_sha256": hashlib.sha256(data[:offset]).hexdigest(),
        "fleet": None,
    }


@pytest.fixture
def deployed(engine_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real TensorRT-RTX engine for sm89 in the cache, and its manifest; returns the manifest."""
    monkeypatch.setenv("TENSORACLE_RTX_TARGETS", "sm89")
    prepared = tensoracle.prepare_engine(
        make_graph(write_weights(tmp_path / "model.safetensors")),
        DECLARATION,
        name="encoder",
        graph_version="1",
        weights=[tmp_path / "model.safetensors"],
        io=IO,
        progress=False,
    )
    manifest = tmp_path / "deploy.json"
    manifest.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "spec": "tests:RECIPES",
                "remote": None,
                "entries": [manifest_entry("encoder", prepared.path)],
            }
        )
    )
    monkeypatch.delenv("TENSORACLE_RTX_TARGETS")
    return manifest


@pytest.mark.backend
def test_the_recipes_entry_is_selected_for_the_gpu_and_its_verified_plan_handed_out(
    deployed: Path, engine_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    entry = json.loads(deployed.read_text())["entries"][0]

    handle = tensoracle.open_deployed(deployed, "encoder")

    assert handle.path == engine_cache / entry["file_name"]
    data = handle.path.read_bytes()
    assert bytes(handle.plan) == data[len(data) - entry["plan"]["size"] :]
    assert "sm89" in handle.why
    assert handle.signer is None
    assert handle.io_signature == entry["io"]
    assert handle.recipe == "encoder"
    if gpu.absent_reason() is not None:  # a described GPU is not a GPU: nothing is deserialized
        with pytest.raises(RuntimeError, match="needs a CUDA device"):
            _ = handle.engine


@pytest.mark.backend
def test_a_gpu_no_entry_runs_on_is_refused_listing_every_candidate(
    deployed: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", H200)
    entry = json.loads(deployed.read_text())["entries"][0]
    with pytest.raises(tensoracle.EngineTargetError) as refused:
        tensoracle.open_deployed(deployed, "encoder")
    message = str(refused.value)
    assert 'recipe "encoder": no entry can run on' in message
    assert f"{entry['file_name']}: " in message
    assert "sm90" in message
    assert "sm89" in message


@pytest.mark.backend
def test_an_unknown_recipe_names_the_recipes_the_manifest_holds(
    deployed: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    with pytest.raises(ValueError, match='no entry of recipe "decoder"; its recipes are "encoder"'):
        tensoracle.open_deployed(deployed, "decoder")


@pytest.mark.backend
def test_a_changed_or_missing_entry_is_refused_before_tensorrt(
    deployed: Path, engine_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    path = engine_cache / json.loads(deployed.read_text())["entries"][0]["file_name"]
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(tensoracle.CorruptEngineError, match="XXH3-128"):
        tensoracle.open_deployed(deployed, "encoder")
    path.unlink()
    with pytest.raises(FileNotFoundError, match="tensoracle cache pull --manifest"):
        tensoracle.open_deployed(deployed, "encoder")


@pytest.mark.backend
def test_without_a_gpu_nothing_is_selected(deployed: Path, monkeypatch: pytest.MonkeyPatch):
    if gpu.absent_reason() is None:
        pytest.skip("this machine has a GPU")
    monkeypatch.delenv("TENSORACLE_DESCRIBED_GPU", raising=False)
    with pytest.raises(tensoracle.EngineTargetError, match="no GPU"):
        tensoracle.open_deployed(deployed, "encoder")


@pytest.mark.backend
def test_the_python_example_of_the_deploy_guide_runs(
    deployed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    monkeypatch.chdir(deployed.parent)  # the guide opens "deploy.json"
    entry = json.loads(deployed.read_text())["entries"][0]
    (block,) = python_blocks("docs/deploy.md")
    exec(compile(block, "docs/deploy.md", "exec"), {"__name__": "__docs__"})
    assert capsys.readouterr().out.startswith(f"{entry['file_name']}: it is built for sm89")


def test_the_cpp_short_path_of_the_deploy_guide_is_the_examples():
    """Each call of the guide's short C++ path is made by examples/cpp_inference/main.cpp, which
    its own test builds (tests/deploy/test_deploy_guide_cpp.py compiles the guide's blocks)."""
    guide = (REPO / "docs" / "deploy.md").read_text()
    short = re.findall(r"^```cpp\n(.*?)^```", guide, re.DOTALL | re.MULTILINE)[0]
    program = (REPO / "examples" / "cpp_inference" / "main.cpp").read_text()
    calls = re.findall(r"\b((?:trt::|engine\.|unit\.)\w+)\(", short)
    assert calls == [
        "trt::open_engine",
        "engine.create_execution",
        "unit.set_input_shapes",
        "unit.enqueue",
    ]
    assert [call for call in calls if f"{call}(" not in program] == []


@pytest.mark.gpu
@pytest.mark.backend
def test_a_deployed_engine_runs_on_this_gpu(engine_cache: Path, tmp_path: Path):
    """On a GPU the backend can run engines on: an entry built for it is selected by its
    manifest, deserialized with its IO checked against the manifest, and executed."""
    if gpu.absent_reason() is not None:
        pytest.skip(f"needs a GPU: {gpu.absent_reason()}")
    skip_where_the_gpu_is_refused()  # TensorRT-RTX on a GPU outside its targets (the H200)
    cp = pytest.importorskip("cupy")
    weights = write_weights(tmp_path / "model.safetensors", bias=(0.5, -1.0))
    prepared = tensoracle.prepare_engine(
        make_graph(weights), DECLARATION, name="runs", graph_version="1", weights=[weights],
        io=IO, progress=False,
    )  # fmt: skip
    manifest = tmp_path / "deploy.json"
    document = {"schema_version": 1, "spec": "tests:RECIPES", "remote": None,
                "entries": [manifest_entry("runs", prepared.path)]}  # fmt: skip
    manifest.write_text(json.dumps(document))

    handle = tensoracle.open_deployed(manifest, "runs")
    with handle.create_execution() as unit:
        unit.set_input_shapes({"features": (1, 4, 2)})
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            features = cp.arange(8, dtype=cp.float32).reshape(1, 4, 2)
            result = cp.full((1, 4, 2), np.nan, dtype=cp.float32)
            unit.enqueue(
                {"features": features.data.ptr, "result": result.data.ptr}, stream=stream.ptr
            )
            stream.synchronize()
        expected = cp.asnumpy(features) + np.array([0.5, -1.0], dtype=np.float32)
        np.testing.assert_array_equal(cp.asnumpy(result), expected)


# Run in a child process, so that a crash (SIGBUS from a mapping whose file was cut) is reported
# as the child's exit status rather than ending the test run: opens the engine, records the
# plan's SHA-256, then has another process write over the file's last 4 KiB and truncate it to
# nothing, and hashes the plan again.
PINNED_PLAN_CHILD = r"""
import hashlib, json, os, subprocess, sys
import tensoracle
from engine_helpers import DECLARATION, IO, make_graph

how, manifest, weights = sys.argv[1:]
if how == "open_deployed":
    handle = tensoracle.open_deployed(manifest, "encoder")
else:
    handle = tensoracle.open_engine(
        make_graph(weights), DECLARATION, name="encoder", graph_version="1",
        weights=[weights], io=IO,
    )
    assert not handle.built, "the saved engine was expected to be reused"
before = hashlib.sha256(handle.plan).hexdigest()
size = handle.path.stat().st_size
subprocess.run(
    [sys.executable, "-c",
     "import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); "
     "os.pwrite(fd, b'\\xff' * 4096, int(sys.argv[2]) - 4096); os.ftruncate(fd, 0); os.close(fd)",
     str(handle.path), str(size)],
    check=True,
)
assert handle.path.stat().st_size == 0
print(json.dumps({"before": before, "after": hashlib.sha256(handle.plan).hexdigest()}))
"""


@pytest.mark.backend
@pytest.mark.parametrize("how", ["open_deployed", "open_engine"])
def test_a_write_into_or_a_truncation_of_the_file_after_the_open_leaves_the_plan_unchanged(
    deployed: Path, engine_cache: Path, tmp_path: Path, how: str
):
    entry = json.loads(deployed.read_text())["entries"][0]
    data = (engine_cache / entry["file_name"]).read_bytes()
    verified = hashlib.sha256(data[len(data) - entry["plan"]["size"] :]).hexdigest()
    support = Path(__file__).resolve().parents[1] / "support"
    env = {
        **os.environ,
        "TENSORACLE_DESCRIBED_GPU": RTX_4090,
        "TENSORACLE_RTX_TARGETS": "sm89",
        "PYTHONPATH": os.pathsep.join([str(support), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PINNED_PLAN_CHILD,
            how,
            str(deployed),
            str(tmp_path / "model.safetensors"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    hashes = json.loads(done.stdout.strip().splitlines()[-1])
    assert hashes == {"before": verified, "after": verified}


# In a child process with a time limit, so that a hang fails the test instead of stopping the
# run: the error's type and message, as the child prints them.
HOSTILE_OPEN_CHILD = r"""
import sys
import tensoracle
manifest, key = sys.argv[1:]
try:
    tensoracle.open_deployed(manifest, "encoder", verify_key=key or None)
except Exception as error:
    print(f"{type(error).__name__}: {error}")
else:
    print("opened")
"""


def open_in_child(manifest: Path, key: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-c", HOSTILE_OPEN_CHILD, str(manifest), key],
        capture_output=True,
        text=True,
        env={**os.environ, "TENSORACLE_DESCRIBED_GPU": RTX_4090},
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.backend
def test_a_fifo_manifest_is_refused_at_once_naming_it(deployed: Path, tmp_path: Path):
    fifo = tmp_path / "deploy.fifo"
    os.mkfifo(fifo)
    refused = open_in_child(fifo)
    assert refused.startswith(("OSError", "ValueError")), refused
    assert f"'{fifo}' is not a regular file" in refused


@pytest.mark.backend
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "link", "huge"])
def test_a_verify_key_that_is_no_key_file_is_refused_at_once_naming_it(
    deployed: Path, tmp_path: Path, kind: str
):
    if kind == "fifo":
        key = tmp_path / "key.fifo"
        os.mkfifo(key)
        expected = f"'{key}' is not a regular file"
    elif kind == "/dev/zero":
        key = Path("/dev/zero")
        expected = "'/dev/zero' is not a regular file"
    elif kind == "link":
        (tmp_path / "real.pem").write_text("-----BEGIN PUBLIC KEY-----\n")
        key = tmp_path / "key.pem"
        key.symlink_to(tmp_path / "real.pem")
        expected = f"key file '{key}' is a symbolic link; name the key file itself"
    else:
        key = tmp_path / "huge.pem"
        key.write_bytes(b"A" * (64 * 1024 + 1))
        expected = f"key file '{key}' holds more than 65536 bytes: it is not a PEM key"
    refused = open_in_child(deployed, str(key))
    assert refused.startswith(("OSError", "ValueError")), refused
    assert expected in refused


@pytest.mark.backend
@pytest.mark.parametrize(
    ("field", "value", "recorded"),
    [
        ("recipe", "decoder", 'name "encoder"'),
        ("graph_version", "0", 'graph_version "1"'),
        ("targets", ["sm89", "sm90"], 'targets ["sm89"]'),
    ],
)
def test_an_edited_manifest_member_is_refused_naming_it_and_its_condition(
    deployed: Path, monkeypatch: pytest.MonkeyPatch, field: str, value: object, recorded: str
):
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    document = json.loads(deployed.read_text())
    document["entries"][0][field] = value
    deployed.write_text(json.dumps(document))
    shown = json.dumps(value, separators=(",", ":"))
    with pytest.raises(ValueError, match="but its conditions record") as refused:
        tensoracle.open_deployed(deployed, str(document["entries"][0]["recipe"]))
    assert f"{deployed}: entries[0].{field} is {shown}" in str(refused.value)
    assert f"but its conditions record {recorded}" in str(refused.value)


@pytest.mark.backend
def test_an_entry_built_on_another_platform_is_not_selected_and_says_why(
    deployed: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    document = json.loads(deployed.read_text())
    entry = document["entries"][0]
    assert entry["conditions"]["os"] == "linux"
    windows = json.loads(json.dumps(entry))
    windows["conditions"]["os"] = "windows"
    windows["file_name"] = _core.make_identity(windows["conditions"]).file_name
    document["entries"] = [windows]
    deployed.write_text(json.dumps(document))
    with pytest.raises(tensoracle.EngineTargetError) as refused:
        tensoracle.open_deployed(deployed, "encoder")
    arch = entry["conditions"]["arch"]
    assert (
        f"{windows['file_name']}: it is built on windows {arch}; this application runs on "
        f"linux {arch}" in str(refused.value)
    )
    # Beside the entry of this platform it is passed over, not ambiguous.
    document["entries"] = [windows, entry]
    deployed.write_text(json.dumps(document))
    assert tensoracle.open_deployed(deployed, "encoder").path.name == entry["file_name"]


@pytest.fixture
def signed(deployed: Path, engine_cache: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The deployed manifest with its entry signed as `tensoracle build --push` records it;
    returns (manifest, verify key file)."""
    from remote_support import make_keys

    signing, verify = make_keys(tmp_path, "deploy")
    document = json.loads(deployed.read_text())
    entry = document["entries"][0]
    data = (engine_cache / entry["file_name"]).read_bytes()
    key = _core.SigningKey.from_pem_file(str(signing))
    trailer = _core.signature_trailer(key, entry["file_name"], data)
    entry["fleet"] = {
        "key": "engines/" + entry["file_name"],
        "url": "s3://b/engines/" + entry["file_name"],
        "signed": True,
        "signature": bytes(trailer[: _core.SIGNATURE_TRAILER_BYTES - 8]).hex(),
    }
    deployed.write_text(json.dumps(document))
    return deployed, verify


@pytest.mark.backend
def test_a_signed_entry_without_a_key_is_refused_unless_the_check_is_skipped_by_name(
    signed: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
):
    manifest, _verify = signed
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    monkeypatch.delenv("TENSORACLE_REMOTE_VERIFY_KEY", raising=False)
    with pytest.raises(tensoracle.UntrustedEngineError) as refused:
        tensoracle.open_deployed(manifest, "encoder")
    message = str(refused.value)
    assert "the manifest records a signature for it (fleet.signature) but no verify key" in message
    assert "open_deployed(verify_key=...)" in message
    assert "open_deployed(skip_signature_verification=True)" in message
    handle = tensoracle.open_deployed(manifest, "encoder", skip_signature_verification=True)
    assert handle.signer is None


@pytest.fixture
def signed_manifest(signed: tuple[Path, Path]) -> tuple[Path, Path]:
    """The signed manifest (`tensoracle manifest sign`) of the deployed manifest, written over
    it; returns (manifest, verify key file)."""
    manifest, verify = signed
    signing = verify.with_name(verify.name.replace("-verify.pem", "-signing.pem"))
    text = _core.sign_manifest(
        manifest.read_text(), str(manifest), 1, "2099-01-01T00:00:00Z", [str(signing)]
    )
    manifest.write_text(text)
    return manifest, verify


@pytest.mark.backend
@pytest.mark.parametrize("passed", ["argument", "environment"])
def test_a_verify_key_can_be_given_as_its_pem_text(
    signed_manifest: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, passed: str
):
    manifest, verify = signed_manifest
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    text = verify.read_text()
    verify.unlink()  # only the text is left
    if passed == "argument":
        handle = tensoracle.open_deployed(manifest, "encoder", verify_key=text)
    else:
        monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", text)
        handle = tensoracle.open_deployed(manifest, "encoder")
    assert handle.signer == _core.VerifyKey.from_pem(text).fingerprint


@pytest.mark.backend
def test_a_streamed_open_holds_no_plan_and_hands_out_only_checked_chunks(
    deployed: Path, engine_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    from tensoracle.engine.deployed import CheckedPlanReads

    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    entry = json.loads(deployed.read_text())["entries"][0]
    path = engine_cache / entry["file_name"]
    data = path.read_bytes()
    plan = data[len(data) - entry["plan"]["size"] :]
    handle = tensoracle.open_deployed(deployed, "encoder", stream_plan=True)
    assert handle.streamed
    assert handle.plan is None
    # The reads TensorRT's deserialize_cuda_engine(stream) makes, in pieces of 1,000 bytes (the
    # IStreamReaderV2 subclass itself needs a CUDA driver to be made: this is its reading part).
    module = handle.backend.module
    stream = CheckedPlanReads(handle._opened, module.SeekPosition)
    pieces = []
    while piece := stream.read(1000, 0):
        pieces.append(piece)
    assert b"".join(pieces) == plan
    assert stream.seek(-10, module.SeekPosition.END)
    assert stream.read(100, 0) == plan[-10:]
    assert not stream.seek(1, module.SeekPosition.END)
    assert stream.failure is None
    # One plan byte changed in the file after an open (in place, as another process would):
    # the read of its chunk hands out nothing and the stream ends there, saying why. (The first
    # handle's reader keeps the chunk it checked, and goes on handing out those bytes.)
    second = tensoracle.open_deployed(deployed, "encoder", stream_plan=True)
    with path.open("r+b") as file:
        file.seek(len(data) - 1)
        file.write(bytes([data[-1] ^ 1]))
    changed = CheckedPlanReads(second._opened, module.SeekPosition)
    assert changed.read(len(plan), 0) == b""
    assert isinstance(changed.failure, tensoracle.CorruptEngineError)
    message = str(changed.failure)
    assert str(path) in message
    assert f"chunk 0 (bytes 0 to {len(plan) - 1} of the plan) has the XXH3-128 " in message
    assert changed.read(10, 0) == b""
    assert CheckedPlanReads(handle._opened, module.SeekPosition).read(len(plan), 0) == plan
