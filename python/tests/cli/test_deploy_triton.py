"""`tensoracle deploy triton`: a Triton model repository from a deployment manifest. Every
config.pbtxt written is parsed into Triton's own ModelConfig message (tritonclient's
model_config_pb2, by protobuf's text_format) and compared field by field; every plan file is the
entry's plan byte for byte. A recipe Triton cannot serve, or whose entry is not the manifest's,
is refused naming the recipe, the entry and why, and leaves nothing in OUT.

The engine files are written by the suite's pure-Python writer (engine_files.py): TensorRT
entries cannot be built here, and none is deserialized."""

from __future__ import annotations

import hashlib
import json
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cache_cli import run
from docs_examples import REPO, text_blocks
from engine_files import CHUNK_BYTES, engine_file_bytes, engine_file_name, plan_checksum_hex
from google.protobuf import text_format
from remote_support import make_keys
from tritonclient.grpc import model_config_pb2

from tensoracle import _core
from tensoracle.terminal_text import terminal_text

TENSORRT = "11.4.0.106"
IMAGES = {"name": "images", "mode": "INPUT", "dtype": "FLOAT", "shape": [-1, 3, 224, 224],
          "location": "DEVICE", "format": "LINEAR",
          "profile": {"min": [1, 3, 224, 224], "opt": [8, 3, 224, 224],
                      "max": [32, 3, 224, 224]}}  # fmt: skip
MASK = {"name": "mask", "mode": "INPUT", "dtype": "BOOL", "shape": [-1, 16], "location": "DEVICE",
        "format": "LINEAR",
        "profile": {"min": [1, 16], "opt": [8, 16], "max": [32, 16]}}  # fmt: skip
LOGITS = {"name": "logits", "mode": "OUTPUT", "dtype": "HALF", "shape": [-1, 1000],
          "location": "DEVICE", "format": "LINEAR"}  # fmt: skip
IDS = {"name": "ids", "mode": "OUTPUT", "dtype": "INT64", "shape": [-1], "location": "DEVICE",
       "format": "LINEAR"}  # fmt: skip
ENCODER_IO = {"tensors": [IMAGES, MASK, LOGITS, IDS]}


def conditions(name: str, **runs_on: Any) -> dict[str, Any]:
    """A TensorRT 11 entry's identity conditions, as open_engine records them."""
    return {"name": name, "graph_version": "1", "backend": "tensorrt",
            "backend_version": TENSORRT, "inputs": {}, "optimization_level": 3, "tf32": False,
            "weights": [], "plugins": [], "os": "linux", "arch": "x86_64",
            **runs_on}  # fmt: skip


SAME_90 = {"gpu": {"compute_capability": "9.0"}, "targets": ["sm90"],
           "hardware_compatibility": "same_compute_capability"}  # fmt: skip
EXACT_86 = {"gpu": {"name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6",
                    "multiprocessor_count": 82}, "targets": ["sm86"]}  # fmt: skip
AMPERE_PLUS = {"gpu": None, "targets": [], "hardware_compatibility": "ampere_plus"}
PLUGIN = hashlib.sha256(b"libdecoder_plugins.so").hexdigest()
RTX = {"backend": "tensorrt_rtx", "backend_version": "1.7.1.116", "gpu": None,
       "targets": ["sm89", "sm120"]}  # fmt: skip


def plan_bytes(size: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()


def save(cache: Path, recipe: str, conditions: dict[str, Any], io: Any, plan: bytes) -> dict:
    """Saves the engine file in ``cache`` (with no IO signature where ``io`` is None); returns
    its manifest entry as build writes it."""
    cache.mkdir(parents=True, exist_ok=True)
    data = engine_file_bytes(conditions, {} if io is None else {"io": io}, plan)
    name = engine_file_name(conditions)
    (cache / name).write_bytes(data)
    offset = len(data) - len(plan)
    return {
        "recipe": recipe, "graph_version": conditions["graph_version"], "file_name": name,
        "conditions": conditions, "backend": conditions["backend"],
        "backend_version": conditions["backend_version"], "targets": conditions["targets"],
        "hardware_compatibility": conditions.get("hardware_compatibility"), "io": io,
        "plan": {"size": len(plan), "xxh3_128": plan_checksum_hex(plan)},
        "engine_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "header_sha256": hashlib.sha256(data[:offset]).hexdigest(), "fleet": None,
    }  # fmt: skip


def write_manifest(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps({"schema_version": 1, "spec": "models:RECIPES", "remote": None,
                                "entries": entries}))  # fmt: skip
    return path


@pytest.fixture
def deployed(tmp_path: Path) -> dict[str, Any]:
    """An encoder with a plan for compute capability 9.0 (9 MiB and 77 bytes: three chunks) and
    one for the RTX 3090 (8.6), and a decoder for every GPU from Ampere on, in a cache folder,
    with their manifest."""
    cache = tmp_path / "cache"
    plans = {"sm90": plan_bytes(2 * CHUNK_BYTES + (1 << 20) + 77, 1),
             "sm86": plan_bytes(1000, 2), "ampere": plan_bytes(3000, 3)}  # fmt: skip
    decoder_io = {"tensors": [{**IDS, "mode": "INPUT", "profile": {"min": [1], "opt": [4],
                                                                   "max": [64]}},
                              {**LOGITS, "dtype": "BF16"}]}  # fmt: skip
    entries = [
        save(cache, "encoder", conditions("encoder", **SAME_90), ENCODER_IO, plans["sm90"]),
        save(cache, "encoder", conditions("encoder", **EXACT_86), ENCODER_IO, plans["sm86"]),
        save(
            cache,
            "decoder",
            conditions("decoder", **AMPERE_PLUS, plugins=[PLUGIN]),
            decoder_io,
            plans["ampere"],
        ),
    ]
    manifest = write_manifest(tmp_path / "deploy.json", entries)
    return {"cache": cache, "manifest": manifest, "entries": entries, "plans": plans,
            "out": tmp_path / "models", "tmp": tmp_path}  # fmt: skip


def deploy(deployed: dict[str, Any], *extra: str, manifest: Path | None = None):
    return run("deploy", "triton", "--manifest", str(manifest or deployed["manifest"]),
               "--cache-dir", str(deployed["cache"]), *extra, str(deployed["out"]))  # fmt: skip


def parsed(folder: Path) -> model_config_pb2.ModelConfig:
    """The folder's config.pbtxt as Triton reads it: text format into its ModelConfig."""
    return text_format.Parse((folder / "config.pbtxt").read_text(), model_config_pb2.ModelConfig())


def declared(tensors: Any) -> list[tuple[str, str, list[int]]]:
    return [(t.name, model_config_pb2.DataType.Name(t.data_type), list(t.dims)) for t in tensors]


def every_file(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


def plan_name(entry: dict) -> str:
    return entry["file_name"].removesuffix(".engine") + ".plan"


def test_the_repository_is_what_triton_reads_and_each_plan_is_the_entrys(deployed):
    written = deploy(deployed)

    assert written.returncode == 0, written.stderr
    out, plans = deployed["out"], deployed["plans"]
    sm90, sm86, ampere = deployed["entries"]
    encoder = parsed(out / "encoder")
    assert (encoder.name, encoder.platform, encoder.max_batch_size) == (
        "encoder", "tensorrt_plan", 0,
    )  # fmt: skip
    assert declared(encoder.input) == [
        ("images", "TYPE_FP32", [-1, 3, 224, 224]),
        ("mask", "TYPE_BOOL", [-1, 16]),
    ]
    assert declared(encoder.output) == [
        ("logits", "TYPE_FP16", [-1, 1000]),
        ("ids", "TYPE_INT64", [-1]),
    ]
    assert dict(encoder.cc_model_filenames) == {"9.0": plan_name(sm90), "8.6": plan_name(sm86)}
    assert encoder.default_model_filename == ""
    decoder = parsed(out / "decoder")
    assert (decoder.name, decoder.platform, decoder.max_batch_size) == (
        "decoder", "tensorrt_plan", 0,
    )  # fmt: skip
    assert declared(decoder.input) == [("ids", "TYPE_INT64", [-1])]
    assert declared(decoder.output) == [("logits", "TYPE_BF16", [-1, 1000])]
    assert dict(decoder.cc_model_filenames) == {}
    assert decoder.default_model_filename == plan_name(ampere)
    # The raw plans, byte for byte, and nothing else (no temporary left).
    assert (out / "encoder" / "1" / plan_name(sm90)).read_bytes() == plans["sm90"]
    assert (out / "encoder" / "1" / plan_name(sm86)).read_bytes() == plans["sm86"]
    assert (out / "decoder" / "1" / plan_name(ampere)).read_bytes() == plans["ampere"]
    assert every_file(out) == sorted([
        "decoder", "decoder/1", f"decoder/1/{plan_name(ampere)}", "decoder/config.pbtxt",
        "encoder", "encoder/1", f"encoder/1/{plan_name(sm86)}", f"encoder/1/{plan_name(sm90)}",
        "encoder/config.pbtxt",
    ])  # fmt: skip
    assert f"1/{plan_name(sm90)} (compute capability 9.0)" in written.stdout
    assert (
        f"1/{plan_name(ampere)} (every GPU of compute capability 8.0 or newer "
        "(default_model_filename))"
    ) in written.stdout
    assert "it runs on compute capability 8.0 or newer only" in written.stdout
    assert f"TensorRT {TENSORRT} plans" in written.stdout
    assert f"the plans use plugin libraries (SHA-256 {PLUGIN})" in written.stdout
    assert '--backend-config=tensorrt,plugins="' in written.stdout
    assert f"serve it: tritonserver --model-repository {out}\n" in written.stdout
    assert written.stdout.endswith("2 written, 0 refused\n")

    # Again: the same repository is left as it is; the report as JSON says so.
    again = deploy(deployed, "--format", "json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert [(one["recipe"], one["unchanged"]) for one in report["written"]] == [
        ("encoder", True),
        ("decoder", True),
    ]
    assert report["written"][0]["plans"][0] == {
        "file": f"1/{plan_name(sm90)}",
        "entry": sm90["file_name"],
        "compute_capabilities": ["9.0"],
    }
    assert report["written"][1]["plans"][0]["compute_capabilities"] == ["default"]
    assert report["refused"] == []


def test_a_tensorrt_rtx_entry_is_refused_naming_the_recipe_and_the_entry(deployed):
    rtx = save(deployed["cache"], "vision", conditions("vision", **RTX), ENCODER_IO, b"x" * 100)
    manifest = write_manifest(deployed["tmp"] / "rtx.json", [*deployed["entries"], rtx])

    written = deploy(deployed, manifest=manifest)

    assert written.returncode == 1
    assert (
        f"refused recipe 'vision': entry {rtx['file_name']}: built by tensorrt_rtx 1.7.1.116; "
        "Triton's tensorrt_plan platform deserializes TensorRT plans only"
    ) in written.stderr
    assert sorted(p.name for p in deployed["out"].iterdir()) == ["decoder", "encoder"]
    assert written.stdout.endswith("2 written, 1 refused\n")


def test_a_damaged_plan_chunk_refuses_the_recipe_and_leaves_nothing(deployed):
    sm90 = deployed["entries"][0]
    path = deployed["cache"] / sm90["file_name"]
    data = bytearray(path.read_bytes())
    data[len(data) - sm90["plan"]["size"] + CHUNK_BYTES + 5] ^= 1  # in chunk 1 of the plan
    path.write_bytes(bytes(data))

    written = deploy(deployed, "--recipe", "encoder")

    assert written.returncode == 1
    assert f"refused recipe 'encoder': entry {sm90['file_name']}: " in written.stderr
    assert re.search(r"chunk 1 \(bytes 4194304 to 8388607 of the plan\)", written.stderr)
    assert every_file(deployed["out"]) == []  # not even the temporary of the plan
    assert written.stdout.endswith("0 written, 1 refused\n")


def test_an_entry_missing_or_changed_in_its_header_is_refused_before_its_plan_is_read(deployed):
    sm90, sm86 = deployed["entries"][:2]
    (deployed["cache"] / sm86["file_name"]).unlink()
    missing = deploy(deployed, "--recipe", "encoder")
    assert missing.returncode == 1
    assert f"refused recipe 'encoder': entry {sm86['file_name']}: " in missing.stderr
    assert "tensoracle cache pull --manifest" in missing.stderr
    assert every_file(deployed["out"]) == []

    path = deployed["cache"] / sm90["file_name"]
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"optimization_level":3', b'"optimization_level":4', 1))
    manifest = write_manifest(deployed["tmp"] / "one.json", [sm90])
    changed = deploy(deployed, manifest=manifest)
    assert changed.returncode == 1
    assert f"refused recipe 'encoder': entry {sm90['file_name']}: " in changed.stderr
    assert every_file(deployed["out"]) == []


def test_an_unsigned_manifest_is_refused_where_a_trust_policy_or_key_is_given(deployed):
    signing, verify = make_keys(deployed["tmp"], "publisher")
    fingerprint = _core.VerifyKey.from_pem_file(str(verify)).fingerprint
    policy = deployed["tmp"] / "policy.json"
    policy.write_text(json.dumps({"schema_version": 1, "threshold": 1,
                                  "keys": {fingerprint: verify.read_text()}}))  # fmt: skip

    for trust in (["--trust-policy", str(policy)], ["--verify-key", str(verify)]):
        refused = deploy(deployed, *trust)
        assert refused.returncode == 1
        assert "is not signed" in refused.stderr
        assert not deployed["out"].exists()

    signed = deployed["tmp"] / "signed.json"
    text = deployed["manifest"].read_text()
    signed.write_text(
        _core.sign_manifest(text, "deploy.json", 3, "2099-01-01T00:00:00Z", [str(signing)])
    )
    written = deploy(deployed, "--trust-policy", str(policy), manifest=signed)
    assert written.returncode == 0, written.stderr
    assert written.stdout.endswith("2 written, 0 refused\n")
    # Without a key the signed manifest is refused, saying how to pass it.
    unkeyed = deploy(deployed, manifest=signed)
    assert unkeyed.returncode == 1
    assert "is a signed manifest, but no verify key" in unkeyed.stderr


def test_a_folder_holding_another_model_of_the_same_name_is_left_as_it_is(deployed):
    other = deployed["out"] / "encoder"
    (other / "1").mkdir(parents=True)
    (other / "config.pbtxt").write_text('name: "encoder"\nplatform: "onnxruntime_onnx"\n')
    (other / "1" / "model.onnx").write_bytes(b"onnx")
    before = {p: p.read_bytes() for p in other.rglob("*") if p.is_file()}

    written = deploy(deployed)

    assert written.returncode == 1
    assert f"refused recipe 'encoder': {other} already holds another model" in written.stderr
    assert {p: p.read_bytes() for p in other.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in deployed["out"].iterdir()) == ["decoder", "encoder"]


def test_recipes_are_chosen_by_name_and_an_unknown_one_is_named(deployed):
    written = deploy(deployed, "--recipe", "decoder")
    assert written.returncode == 0, written.stderr
    assert sorted(p.name for p in deployed["out"].iterdir()) == ["decoder"]
    unknown = deploy(deployed, "--recipe", "classifier")
    assert unknown.returncode == 1
    assert "has no recipe 'classifier'; its recipes are 'encoder', 'decoder'" in unknown.stderr


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"dtype": "FP8"}, "tensor 'images' is FP8, which Triton has no data_type for"),
        ({"format": "CHW32"}, "tensor 'images' is in the CHW32 format"),
        ({"location": "HOST"}, "tensor 'images' is in HOST memory (a shape tensor); Triton "
                               "needs it declared with is_shape_tensor"),
        ({"shape": [], "profile": {"min": [], "opt": [], "max": []}},
         "tensor 'images' is a scalar (no dimensions); with max_batch_size 0 Triton refuses"),
        ({"shape": [-1, 0, 224, 224]},
         "tensor 'images' has the shape [-1, 0, 224, 224], with a dimension of 0"),
    ],
)  # fmt: skip
def test_an_input_triton_cannot_declare_is_refused_naming_the_tensor(deployed, change, reason):
    io = {"tensors": [{**IMAGES, **change}, LOGITS]}
    entry = save(deployed["cache"], "odd", conditions("odd", **SAME_90), io, b"plan")
    manifest = write_manifest(deployed["tmp"] / "odd.json", [entry])
    written = deploy(deployed, manifest=manifest)
    assert written.returncode == 1
    assert f"refused recipe 'odd': entry {entry['file_name']}: {reason}" in written.stderr
    assert every_file(deployed["out"]) == []


def test_two_entries_for_one_compute_capability_are_refused(deployed):
    again = save(deployed["cache"], "encoder",
                 conditions("encoder", **{**EXACT_86, "gpu": {**EXACT_86["gpu"],
                                                              "name": "NVIDIA A10"}}),
                 ENCODER_IO, b"a10")  # fmt: skip
    manifest = write_manifest(deployed["tmp"] / "two.json", [*deployed["entries"], again])
    written = deploy(deployed, "--recipe", "encoder", manifest=manifest)
    assert written.returncode == 1
    assert (
        f"entries {deployed['entries'][1]['file_name']} and {again['file_name']} both run on "
        "compute capability 8.6, and Triton chooses a plan by compute capability alone"
    ) in written.stderr
    assert every_file(deployed["out"]) == []


def test_names_are_written_as_text_format_strings_triton_reads_back():
    from tensoracle.model_repository.model_config import ModelConfig, Tensor

    odd = 'in"put\\ \n é'
    config = ModelConfig(
        name="model",
        inputs=(Tensor(odd, "TYPE_UINT8", (2, -1)),),
        outputs=(Tensor("out", "TYPE_INT32", (1,)),),
        cc_model_filenames={"12.0": "b.plan", "8.9": "a.plan"},
    )
    read = text_format.Parse(config.text(), model_config_pb2.ModelConfig())
    assert declared(read.input) == [(odd, "TYPE_UINT8", [2, -1])]
    assert declared(read.output) == [("out", "TYPE_INT32", [1])]
    assert dict(read.cc_model_filenames) == {"8.9": "a.plan", "12.0": "b.plan"}


def test_the_guide_names_the_commands_and_the_schema_tested():
    guide = (REPO / "docs" / "triton.md").read_text()
    assert "tensoracle deploy triton --manifest deploy.json models/" in guide
    assert "tritonserver --model-repository models/" in guide
    # What the command says of an ampere_plus plan (see the first test's output).
    words = " ".join(guide.split())
    assert "runs only on a GPU of compute capability 8.0 (Ampere) or newer" in words
    tested = ".".join(version("tritonclient").split(".")[:2])
    assert f"validated against the tritonclient {tested} schema" in guide
    # The config.pbtxt the guide shows is one Triton reads, with the command's layout.
    shown = next(block for block in text_blocks("docs/triton.md") if "platform:" in block)
    config = text_format.Parse(shown, model_config_pb2.ModelConfig())
    assert (config.platform, config.max_batch_size) == ("tensorrt_plan", 0)
    assert sorted(config.cc_model_filenames) == ["8.6", "9.0"]


# --- the command's place in tensoracle -------------------------------------------------------


def test_deploy_lists_triton_and_triton_has_the_python_parsers_help():
    listing = run("deploy", "--help")
    assert listing.returncode == 0, listing.stderr
    assert re.search(r"^\s+triton\s+Write a Triton model repository", listing.stdout, re.M)
    own = run("deploy", "triton", "--help")
    assert own.returncode == 0, own.stderr
    assert own.stdout.startswith("usage: tensoracle deploy triton ")
    assert "--manifest FILE" in own.stdout
    bare = run("deploy")
    assert bare.returncode == 2
    assert "A subcommand is required" in bare.stderr


# --- what the guide promises -----------------------------------------------------------------


def refused_alone(deployed: dict[str, Any], entries: list[dict], *extra: str):
    manifest = write_manifest(deployed["tmp"] / "alone.json", entries)
    written = deploy(deployed, *extra, manifest=manifest)
    assert written.returncode == 1
    assert every_file(deployed["out"]) == []
    return written


def test_entries_built_by_two_tensorrt_versions_are_refused(deployed):
    sm90 = deployed["entries"][0]
    newer = save(deployed["cache"], "encoder",
                 conditions("encoder", **EXACT_86, backend_version="11.5.0.3"), ENCODER_IO,
                 b"newer")  # fmt: skip
    written = refused_alone(deployed, [sm90, newer])
    assert (
        f"refused recipe 'encoder': its entries were built by TensorRT {TENSORRT} and 11.5.0.3, "
        "and a Triton server runs one TensorRT version"
    ) in written.stderr


def test_entries_with_different_inputs_or_outputs_are_refused(deployed):
    sm90 = deployed["entries"][0]
    other = save(deployed["cache"], "encoder", conditions("encoder", **EXACT_86),
                 {"tensors": [IMAGES, LOGITS]}, b"other io")  # fmt: skip
    written = refused_alone(deployed, [sm90, other])
    assert (
        f"refused recipe 'encoder': entries {sm90['file_name']} and {other['file_name']} record "
        "different inputs or outputs"
    ) in written.stderr


def test_an_entry_without_an_io_signature_is_refused(deployed):
    bare = save(deployed["cache"], "bare", conditions("bare", **SAME_90), None, b"no io")
    written = refused_alone(deployed, [bare])
    assert (
        f"refused recipe 'bare': entry {bare['file_name']}: the manifest records no IO signature"
    ) in written.stderr


@pytest.mark.parametrize("recipe", [".hidden", "a\\b"])
def test_a_recipe_name_that_cannot_be_a_folder_name_is_refused(deployed, recipe):
    entry = save(deployed["cache"], recipe, conditions(recipe, **SAME_90), ENCODER_IO, b"odd")
    # The entry's file name has the name with '_' for a character a file name cannot hold.
    named = entry["file_name"].replace("\\", "_")
    (deployed["cache"] / entry["file_name"]).rename(deployed["cache"] / named)
    entry["file_name"] = named
    written = refused_alone(deployed, [entry])
    shown = terminal_text(f"refused recipe {recipe!r}: its name cannot be a model folder's name")
    assert shown in written.stderr


def test_a_link_at_the_model_folder_is_left_as_it_is(deployed):
    elsewhere = deployed["tmp"] / "elsewhere"
    elsewhere.mkdir()
    deployed["out"].mkdir()
    link = deployed["out"] / "encoder"
    link.symlink_to(elsewhere)

    written = deploy(deployed, "--recipe", "encoder")

    assert written.returncode == 1
    assert f"refused recipe 'encoder': {link} already holds another model" in written.stderr
    assert link.is_symlink()
    assert list(elsewhere.iterdir()) == []


def test_an_empty_model_folder_is_written_into(deployed):
    (deployed["out"] / "encoder").mkdir(parents=True)
    written = deploy(deployed, "--recipe", "encoder")
    assert written.returncode == 0, written.stderr
    assert parsed(deployed["out"] / "encoder").name == "encoder"
    assert (deployed["out"] / "encoder" / "1" / plan_name(deployed["entries"][0])).read_bytes() == (
        deployed["plans"]["sm90"]
    )


def test_out_that_is_a_file_is_named(deployed):
    deployed["out"].write_text("not a folder")
    written = deploy(deployed)
    assert written.returncode == 2
    assert f"tensoracle deploy triton: OUT: {deployed['out']} is not a folder\n" in written.stderr
    assert deployed["out"].read_text() == "not a folder"


def signed_manifest(deployed: dict[str, Any], version: int) -> tuple[Path, Path, Path]:
    """The fixture's manifest signed at ``version``; (it, its verify key, a policy of that key)."""
    signing, verify = make_keys(deployed["tmp"], "publisher")
    fingerprint = _core.VerifyKey.from_pem_file(str(verify)).fingerprint
    policy = deployed["tmp"] / "policy.json"
    policy.write_text(json.dumps({"schema_version": 1, "threshold": 1,
                                  "keys": {fingerprint: verify.read_text()}}))  # fmt: skip
    signed = deployed["tmp"] / f"signed-{version}.json"
    signed.write_text(
        _core.sign_manifest(deployed["manifest"].read_text(), "deploy.json", version,
                            "2099-01-01T00:00:00Z", [str(signing)])
    )  # fmt: skip
    return signed, verify, policy


@pytest.mark.parametrize("variable", ["TENSORACLE_TRUST_POLICY", "TENSORACLE_REMOTE_VERIFY_KEY"])
def test_the_trust_variables_are_the_options_defaults(deployed, monkeypatch, variable):
    signed, verify, policy = signed_manifest(deployed, 3)
    monkeypatch.setenv(variable, str(policy if variable.endswith("POLICY") else verify))

    refused = deploy(deployed)  # the unsigned manifest
    assert refused.returncode == 1
    assert "is not signed" in refused.stderr
    assert not deployed["out"].exists()

    written = deploy(deployed, manifest=signed)
    assert written.returncode == 0, written.stderr
    assert written.stdout.endswith("2 written, 0 refused\n")


def test_the_trust_policy_variable_comes_before_the_verify_key_variable(deployed, monkeypatch):
    signed, _verify, policy = signed_manifest(deployed, 3)
    _other_signing, other_verify = make_keys(deployed["tmp"], "stranger")
    monkeypatch.setenv("TENSORACLE_TRUST_POLICY", str(policy))
    monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", str(other_verify))  # would refuse it
    written = deploy(deployed, manifest=signed)
    assert written.returncode == 0, written.stderr


def test_a_signed_manifest_below_the_minimum_version_is_refused(deployed):
    signed, verify, _policy = signed_manifest(deployed, 3)

    refused = deploy(deployed, "--verify-key", str(verify), "--minimum-version", "4",
                     manifest=signed)  # fmt: skip
    assert refused.returncode == 1
    assert refused.stderr.startswith("tensoracle deploy triton: ")
    assert "3 is lower than the minimum version 4 required" in refused.stderr
    assert not deployed["out"].exists()

    written = deploy(deployed, "--verify-key", str(verify), "--minimum-version", "3",
                     manifest=signed)  # fmt: skip
    assert written.returncode == 0, written.stderr


def test_every_file_and_folder_written_is_flushed_to_the_disk(deployed, monkeypatch):
    import os

    from tensoracle.model_repository import repository

    synced = []
    fsync = os.fsync

    def recording(descriptor: int) -> None:  # os.fsync, recording what it flushes
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        fsync(descriptor)

    trusted = _core.read_trusted_manifest(
        str(deployed["manifest"]), str(deployed["cache"]), None, None, None, 0
    )
    out = deployed["out"]
    out.mkdir()
    monkeypatch.setattr(os, "fsync", recording)
    repository.write_recipe(trusted, trusted.document, "encoder", out)

    prefix = f"{out.resolve()}/"
    flushed = sorted(
        re.sub(r"^\.encoder\.[^/]+\.partial", "STAGING", path.removeprefix(prefix))
        for path in synced
    )
    sm90, sm86 = (plan_name(entry) for entry in deployed["entries"][:2])
    assert flushed == sorted([
        f"STAGING/1/.{sm90}.partial", f"STAGING/1/.{sm86}.partial", "STAGING/config.pbtxt",
        "STAGING/1", "STAGING", str(out.resolve()),
    ])  # fmt: skip
