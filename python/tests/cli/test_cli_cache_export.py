"""End-to-end tests of `tensoracle cache export`: the plan written is byte for byte the saved
engine's, only after every check of an open passed; a refused entry (damaged, badly signed,
ambiguous or unknown) writes nothing and leaves an existing output as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cache_cli import run
from engine_files import (
    CHUNK_BYTES,
    engine_file_bytes,
    engine_file_name,
    plan_checksum_hex,
    sha256_hex,
    write_engine,
)
from remote_support import make_keys

from tensoracle import _core

PLAN = bytes(range(256)) * (CHUNK_BYTES // 256) + b"tail of the second chunk"


def _conditions(name: str = "encoder", graph_version: str = "3") -> dict[str, object]:
    return {
        "name": name,
        "graph_version": graph_version,
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "gpu": None,
        "targets": ["sm86", "sm89"],
    }


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    directory.mkdir()
    return directory


def export(cache: Path, *args: str):
    return run("cache", "export", *args, "--cache-dir", str(cache))


def leftovers(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if ".tmp-" in path.name)


def test_the_exported_plan_is_byte_for_byte_the_saved_plan(cache: Path, tmp_path: Path):
    saved = write_engine(cache, _conditions(), plan=PLAN)
    output = tmp_path / "encoder.plan"
    completed = export(cache, saved.name, "--plan", str(output))
    assert completed.returncode == 0, completed.stderr
    assert output.read_bytes() == PLAN
    assert saved.name in completed.stdout
    assert f"{len(PLAN)} bytes" in completed.stdout
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("how", ["prefix", "recipe", "path"])
def test_an_entry_is_named_by_a_unique_prefix_its_recipe_or_a_path(
    cache: Path, tmp_path: Path, how: str
):
    saved = write_engine(cache, _conditions(), plan=b"encoder plan")
    write_engine(cache, _conditions("decoder"), plan=b"decoder plan")
    entry = {"prefix": saved.name[:12], "recipe": "encoder", "path": str(saved)}[how]
    output = tmp_path / "out.plan"
    completed = export(cache, entry, "--plan", str(output))
    assert completed.returncode == 0, completed.stderr
    assert output.read_bytes() == b"encoder plan"


def test_an_ambiguous_prefix_is_refused_listing_the_candidates(cache: Path, tmp_path: Path):
    first = write_engine(cache, _conditions(graph_version="3"), plan=b"one")
    second = write_engine(cache, _conditions(graph_version="4"), plan=b"two")
    output = tmp_path / "out.plan"
    # "enc" is a prefix of both, and "encoder" the recipe of both.
    for entry in ("enc", "encoder"):
        completed = export(cache, entry, "--plan", str(output))
        assert completed.returncode == 2, completed.stderr
        assert first.name in completed.stderr
        assert second.name in completed.stderr
        assert not output.exists()


def test_an_unknown_entry_is_refused_and_nothing_is_written(cache: Path, tmp_path: Path):
    write_engine(cache, _conditions(), plan=b"one")
    output = tmp_path / "out.plan"
    completed = export(cache, "decoder", "--plan", str(output))
    assert completed.returncode == 1
    assert "no entry named 'decoder'" in completed.stderr
    assert not output.exists()


def test_a_damaged_chunk_is_refused_and_the_existing_output_is_kept(cache: Path, tmp_path: Path):
    saved = write_engine(cache, _conditions(), plan=PLAN)
    data = bytearray(saved.read_bytes())
    data[len(data) - len(PLAN) + CHUNK_BYTES + 3] ^= 1  # in the second chunk
    saved.write_bytes(bytes(data))
    output = tmp_path / "out.plan"
    output.write_bytes(b"the previous export")
    completed = export(cache, saved.name, "--plan", str(output))
    assert completed.returncode == 1
    assert saved.name in completed.stderr
    assert "the plan's XXH3-128 checksum is" in completed.stderr
    # The damaged chunk is named, with the bytes of the plan it covers.
    last = len(PLAN) - 1
    chunk = f"the first damaged chunk: chunk 1 (bytes {CHUNK_BYTES} to {last} of the plan): "
    assert chunk + "XXH3-128 " in completed.stderr, completed.stderr
    assert output.read_bytes() == b"the previous export"
    assert leftovers(tmp_path) == []


def _signed_entry(cache: Path, signing: Path) -> Path:
    """An engine file followed by its signature trailer, as the remote cache publishes it."""
    conditions = _conditions()
    engine = engine_file_bytes(conditions, {}, PLAN)
    name = engine_file_name(conditions)
    key = _core.SigningKey.from_pem_file(signing)
    path = cache / name
    path.write_bytes(engine + _core.signature_trailer(key, name, engine))
    return path


def test_with_a_verify_key_only_the_keys_signature_is_exported(cache: Path, tmp_path: Path):
    signing, verify = make_keys(tmp_path, "fleet")
    _, stranger = make_keys(tmp_path, "stranger")
    saved = _signed_entry(cache, signing)
    output = tmp_path / "out.plan"
    output.write_bytes(b"kept")

    refused = export(cache, saved.name, "--plan", str(output), "--verify-key", str(stranger))
    assert refused.returncode == 1
    fingerprint = _core.VerifyKey.from_pem_file(stranger).fingerprint
    assert (
        f"'{saved}' has a signature that the trusted key {fingerprint} does not accept "
        "(signed by another key, or changed after signing)"
    ) in refused.stderr, refused.stderr
    assert output.read_bytes() == b"kept"

    # Signed, but opened without a key: refused rather than exported unverified.
    unverified = export(cache, saved.name, "--plan", str(output))
    assert unverified.returncode == 1
    assert "no verify key" in unverified.stderr
    assert output.read_bytes() == b"kept"

    accepted = export(cache, saved.name, "--plan", str(output), "--verify-key", str(verify))
    assert accepted.returncode == 0, accepted.stderr
    assert output.read_bytes() == PLAN  # the trailer is not the plan's
    assert "signed by" in accepted.stdout


def test_an_unsigned_entry_is_refused_with_a_verify_key(cache: Path, tmp_path: Path):
    _, verify = make_keys(tmp_path, "fleet")
    saved = write_engine(cache, _conditions(), plan=b"plan")
    output = tmp_path / "out.plan"
    completed = export(cache, saved.name, "--plan", str(output), "--verify-key", str(verify))
    assert completed.returncode == 1
    # The cache saves entries without a signature: the refusal says where a signature is checked.
    assert (
        f"cache entry '{saved}' has no signature for --verify-key to check: entries in the cache "
        "folder are stored without their signature trailer: export from a signed manifest "
        "(--manifest with --verify-key/--trust-policy) to verify a publisher's signature"
    ) in completed.stderr, completed.stderr
    assert not output.exists()
    # A file outside the cache folder is judged by its own signature alone.
    elsewhere = tmp_path / "shipped.engine"
    elsewhere.write_bytes(saved.read_bytes())
    shipped = export(cache, str(elsewhere), "--plan", str(output), "--verify-key", str(verify))
    assert shipped.returncode == 1
    assert f"'{elsewhere}' is not signed" in shipped.stderr, shipped.stderr
    assert "cache folder" not in shipped.stderr
    assert not output.exists()


def test_a_folder_or_file_named_as_the_recipe_in_the_working_directory_is_not_the_entry(
    cache: Path, tmp_path: Path
):
    saved = write_engine(cache, _conditions(), plan=b"encoder plan")
    work = tmp_path / "models"
    (work / "encoder").mkdir(parents=True)  # a serving system's model folder
    completed = run("cache", "export", "encoder", "--plan", "encoder.plan",
                    "--cache-dir", str(cache), cwd=work)  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert (work / "encoder.plan").read_bytes() == b"encoder plan"
    (work / "encoder").rmdir()
    # The plan written under the recipe's name is not the entry afterwards.
    for _ in range(2):
        again = run("cache", "export", "encoder", "--plan", "encoder",
                    "--cache-dir", str(cache), cwd=work)  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert saved.name in again.stdout
        assert (work / "encoder").read_bytes() == b"encoder plan"
    # Given as a path, the folder is taken as given and refused without "(remove it)": it is
    # not the cache's to remove.
    (work / "encoder").unlink()
    (work / "encoder").mkdir()
    folder = run("cache", "export", "./encoder", "--plan", "out.plan",
                 "--cache-dir", str(cache), cwd=work)  # fmt: skip
    assert folder.returncode == 1
    assert "engine file './encoder' is a directory: open_file opens regular files only" in (
        folder.stderr
    ), folder.stderr
    assert "remove it" not in folder.stderr
    assert not (work / "out.plan").exists()


def test_a_link_at_the_output_is_refused_and_its_target_kept(cache: Path, tmp_path: Path):
    saved = write_engine(cache, _conditions(), plan=b"plan")
    target = tmp_path / "elsewhere"
    target.write_bytes(b"not to be replaced")
    output = tmp_path / "out.plan"
    os.symlink(target, output)
    completed = export(cache, saved.name, "--plan", str(output))
    assert completed.returncode == 1
    assert "symbolic link" in completed.stderr
    assert output.is_symlink()
    assert target.read_bytes() == b"not to be replaced"


@pytest.mark.parametrize(
    "args",
    [
        ("--plan", "out.plan"),  # no entry
        ("entry",),  # no --plan
        ("entry", "--plan", "out.plan", "--manifest", "m.json", "--recipe", "r"),
        ("--plan", "out.plan", "--manifest", "m.json"),  # no --recipe
        ("entry", "--plan", "out.plan", "--gpu", "sm89"),  # --gpu without --manifest
    ],
)
def test_misuse_exits_2(cache: Path, tmp_path: Path, args: tuple[str, ...]):
    completed = run("cache", "export", *args, "--cache-dir", str(cache))
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr != ""
    assert not (tmp_path / "out.plan").exists()


def _manifest_entry(path: Path, conditions: dict[str, object], plan: bytes) -> dict[str, object]:
    data = path.read_bytes()
    return {
        "recipe": conditions["name"],
        "graph_version": conditions["graph_version"],
        "file_name": path.name,
        "conditions": conditions,
        "backend": conditions["backend"],
        "backend_version": conditions["backend_version"],
        "targets": conditions["targets"],
        "hardware_compatibility": None,
        "io": None,
        "plan": {"size": len(plan), "xxh3_128": plan_checksum_hex(plan)},
        "engine_bytes": len(data),
        "sha256": sha256_hex(data),
        "header_sha256": sha256_hex(data[: len(data) - len(plan)]),
        "fleet": None,
    }


def test_the_entry_a_manifest_selects_for_a_gpu_is_exported(cache: Path, tmp_path: Path):
    older = {**_conditions(), "targets": ["sm86"]}
    newer = {**_conditions(), "targets": ["sm90"]}
    first = write_engine(cache, older, plan=b"for sm86")
    second = write_engine(cache, newer, plan=PLAN)
    manifest = tmp_path / "deploy.json"
    manifest.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "spec": "m:RECIPES",
                "remote": None,
                "entries": [
                    _manifest_entry(first, older, b"for sm86"),
                    _manifest_entry(second, newer, PLAN),
                ],
            }
        )
    )
    output = tmp_path / "out.plan"
    chosen = export(
        cache, "--manifest", str(manifest), "--recipe", "encoder", "--gpu", "sm90",
        "--plan", str(output),
    )  # fmt: skip
    assert chosen.returncode == 0, chosen.stderr
    assert output.read_bytes() == PLAN
    assert second.name in chosen.stdout

    # Two entries of the recipe and no --gpu: refused, naming both.
    output.unlink()
    both = export(cache, "--manifest", str(manifest), "--recipe", "encoder", "--plan", str(output))
    assert both.returncode == 2, both.stderr
    assert first.name in both.stderr
    assert second.name in both.stderr
    assert not output.exists()

    # The file in the cache folder is not the one the manifest names: refused.
    data = bytearray(second.read_bytes())
    data[-1] ^= 1
    second.write_bytes(bytes(data))
    damaged = export(
        cache, "--manifest", str(manifest), "--recipe", "encoder", "--gpu", "9.0",
        "--plan", str(output),
    )  # fmt: skip
    assert damaged.returncode == 1, damaged.stderr
    assert not output.exists()
    assert leftovers(tmp_path) == []
