"""The native `tensoracle cache pull --manifest FILE` (C++, libcurl) against the real S3 server,
run as a C++-only machine runs it: a copy of the command alone on PATH, no Python interpreter to
be found, and a TENSORACLE_PYTHON that records any attempt to hand the pull to Python. Entries
land and open; each hostile object (too large, another header, other plan bytes, a bad or
missing signature, another build of the entry, a key with odd characters) is refused naming the
object and the manifest's field, leaving no file and every entry saved before as it was."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import obstore
import pytest
from cache_cli import tensoracle_executable
from docs_examples import REPO
from published_entries import engine_bytes, entry_of, sign, write_manifest
from remote_support import Fleet, make_keys, store_files

from tensoracle import _core

pytestmark = pytest.mark.slow

RTX_4090 = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}

Pull = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def pull(tmp_path: Path) -> Pull:
    """Runs `tensoracle cache pull ARGS` from a folder holding only a copy of the command (PATH
    has nothing else), with TENSORACLE_PYTHON a tripwire that records being run."""
    folder = tmp_path / "bin"
    folder.mkdir()
    command = folder / "tensoracle"
    shutil.copy2(tensoracle_executable(), command)
    tripwire = tmp_path / "tripwire.sh"
    ran = tmp_path / "python-was-run"
    tripwire.write_text(f"#!/bin/sh\n: > '{ran}'\nexit 99\n")  # no touch on this PATH
    tripwire.chmod(0o755)

    def run(
        *args: str, env: dict[str, str], python: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """With ``python`` False, no interpreter can be found at all (not even the tripwire)."""
        environment = {**env, "PATH": str(folder), "TENSORACLE_PYTHON": str(tripwire)}
        environment.pop("PYTHONPATH", None)
        if not python:
            environment.pop("TENSORACLE_PYTHON")
        completed = subprocess.run(
            [str(command), "cache", "pull", *args],
            capture_output=True, text=True, env=environment, timeout=120, check=False,
        )  # fmt: skip
        assert not ran.exists(), "the native pull handed the command line to Python"
        return completed

    return run


def report(completed: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert completed.stdout.count("\n") == 1, (completed.stdout, completed.stderr)
    return json.loads(completed.stdout)


def saved(cache: Path) -> list[str]:
    """The files of a cache folder but its record of accepted manifest versions."""
    if not cache.exists():
        return []
    return [name for name in store_files(cache) if name != "manifest-versions.json"]


def node(fleet: Fleet, name: str = "node", **extra: str) -> dict[str, str]:
    environment = fleet.environment(name, **extra)
    environment.pop("TENSORACLE_REMOTE")
    environment.pop("TENSORACLE_REMOTE_VERIFY_KEY", None)
    environment.pop("TENSORACLE_TRUST_POLICY", None)
    return environment


def test_entries_land_verified_and_open_with_no_python_on_path(s3_server, tmp_path: Path, pull):
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "farm")
    key = _core.SigningKey.from_pem_file(signing)
    encoder = engine_bytes("encoder", os.urandom(5 << 20))  # two plan chunks
    decoder = engine_bytes("decoder", bytes(range(256)) * 64)
    entries = [entry_of(fleet, encoder, key), entry_of(fleet, decoder, key)]
    manifest = write_manifest(tmp_path / "deploy.json", fleet, entries)
    sign(manifest, signing)
    environment = node(fleet)

    # Signed: without a key or policy the manifest itself is refused, before any request.
    unverified = pull("--manifest", str(manifest), env=environment)
    assert unverified.returncode == 1
    assert "is a signed manifest, but no verify key or trust policy is set" in unverified.stderr
    assert not fleet.cache("node").exists() or store_files(fleet.cache("node")) == []

    pulled = pull("--manifest", str(manifest), "--verify-key", str(verify), env=environment)
    assert pulled.returncode == 0, pulled.stderr
    result = report(pulled)
    assert result["remote"] == fleet.url
    assert result["directory"] == str(fleet.cache("node"))
    assert sorted((item["file_name"], item["size_bytes"], item["signed"])
                  for item in result["pulled"]) == sorted(
        (entry["file_name"], entry["engine_bytes"], True) for entry in entries)  # fmt: skip
    assert (result["already_present"], result["refused"]) == ([], [])
    cache = fleet.cache("node")
    # The entries, and the signed manifest's version, recorded as an application records it.
    assert store_files(cache) == sorted(
        [*(entry["file_name"] for entry in entries), "manifest-versions.json"]
    )
    assert (cache / entries[0]["file_name"]).read_bytes() == encoder
    assert (cache / entries[1]["file_name"]).read_bytes() == decoder
    opened = _core.open_deployed(manifest, "encoder", RTX_4090, "tensorrt_rtx", "1.7.1.116",
                                 cache, verify)  # fmt: skip
    assert Path(opened.path).name == entries[0]["file_name"]

    # Again, as a table, the key from the variable: each judged from its header.
    again = pull("--manifest", str(manifest), "--format", "table",
                 env={**environment, "TENSORACLE_REMOTE_VERIFY_KEY": str(verify)})  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "0 pulled, 2 already present, 0 refused" in again.stdout
    # --recipe: only that recipe's entries.
    only = pull("--manifest", str(manifest), "--verify-key", str(verify), "--recipe", "decoder",
                env=environment)  # fmt: skip
    assert report(only)["already_present"] == [{"file_name": entries[1]["file_name"]}]


def test_the_verify_key_checks_each_object_s_signature(s3_server, tmp_path: Path, pull):
    # The manifest is the farm's, signed; the object under its key is signed by a stranger, and
    # the manifest (as if edited before signing) records the stranger's signature: the verify key
    # refuses the object itself, before its header is decoded.
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "farm")
    stranger_signing, _stranger = make_keys(tmp_path, "stranger")
    stranger = _core.SigningKey.from_pem_file(stranger_signing)
    engine = engine_bytes("encoder", bytes(range(256)) * 16)
    entry = entry_of(fleet, engine, stranger)
    manifest = write_manifest(tmp_path / "deploy.json", fleet, [entry])
    sign(manifest, signing)
    refused = pull("--manifest", str(manifest), "--verify-key", str(verify), env=node(fleet))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    [item] = report(refused)["refused"]
    assert item["file_name"] == entry["file_name"]
    assert f"{fleet.url}/{entry['fleet']['key']}" in item["reason"]
    assert _core.VerifyKey.from_pem_file(verify).fingerprint in item["reason"]
    assert saved(fleet.cache("node")) == []


def refusal(pull: Pull, manifest: Path, environment: dict[str, str], name: str) -> str:
    pulled = pull("--manifest", str(manifest), env=environment)
    assert pulled.returncode == 1, pulled.stdout + pulled.stderr
    result = report(pulled)
    assert result["pulled"] == []
    [item] = [item for item in result["refused"] if item["file_name"] == name]
    return str(item["reason"])


def test_hostile_objects_are_refused_naming_object_and_field_and_nothing_saved_is_lost(
    s3_server, tmp_path: Path, pull
):
    fleet = Fleet(s3_server, tmp_path)
    signing, _verify = make_keys(tmp_path, "farm")
    key = _core.SigningKey.from_pem_file(signing)
    plan = os.urandom(1 << 20)
    engine = engine_bytes("encoder", plan)
    entry = entry_of(fleet, engine, key)
    name, object_key = entry["file_name"], entry["fleet"]["key"]
    url = f"{fleet.url}/{object_key}"
    where = f"{tmp_path / 'deploy.json'}: entries[1]"
    # An entry saved before, which every refusal below must leave as it is.
    kept_engine = engine_bytes("kept", b"kept plan" * 100)
    kept = entry_of(fleet, kept_engine)
    manifest = write_manifest(tmp_path / "deploy.json", fleet, [kept, entry])
    environment = node(fleet)
    cache = fleet.cache("node")
    cache.mkdir(parents=True)
    (cache / kept["file_name"]).write_bytes(kept_engine)
    stranger = tmp_path / "unrelated.bin"
    stranger.write_bytes(b"not tensoracle's")
    shutil.copy2(stranger, cache / "unrelated.bin")
    signed = engine + _core.signature_trailer(key, name, engine)

    def refused(data: bytes, **extra: str) -> str:
        fleet.replace(object_key, data)
        reason = refusal(pull, manifest, {**environment, **extra}, name)
        assert store_files(cache) == sorted([kept["file_name"], "unrelated.bin"]), reason
        assert (cache / kept["file_name"]).read_bytes() == kept_engine
        return reason

    # Larger than the entry (and not by a signature trailer): refused from its size.
    reason = refused(signed + bytes(100))
    assert f"the remote engine {url} is not the entry {where} records" in reason
    assert f"{where}.engine_bytes is {len(engine)}, and the object holds" in reason
    # Larger than this node takes as an engine at all.
    reason = refused(signed, TENSORACLE_REMOTE_MAX_ENGINE_BYTES="1000")
    assert reason == f"{url} holds {len(signed)} bytes, more than the limit of 1000 bytes"
    # Unsigned, where the manifest records its signature.
    reason = refused(engine)
    assert f"it is unsigned, and {where}.fleet.signature records a signature" in reason
    # Signed by another key.
    other_signing, _other = make_keys(tmp_path, "other")
    other = _core.SigningKey.from_pem_file(other_signing)
    reason = refused(engine + _core.signature_trailer(other, name, engine))
    assert f"its signature is not {where}.fleet.signature" in reason
    # Another entry's engine (other conditions) of the same size under this key.
    impostor = engine_bytes("encodex", plan)  # a name of the same length
    assert len(impostor) == len(engine)
    reason = refused(impostor + _core.signature_trailer(key, name, impostor))
    assert f"its conditions differ in name ({where}.conditions)" in reason
    # Other plan bytes, the header made for them: the manifest's plan checksum differs.
    changed = engine_bytes("encoder", bytes(byte ^ 0x5A for byte in plan))
    reason = refused(changed + _core.signature_trailer(key, name, changed))
    assert f"{where}.plan.xxh3_128 is '{entry['plan']['xxh3_128']}'" in reason
    # The plan's bytes changed under the header: its checksums refuse it at the end.
    flipped = bytearray(signed)
    flipped[len(engine) - 10] ^= 0xFF
    reason = refused(bytes(flipped))
    assert url in reason
    # Another build of the entry: the same plan, another header (its build time).
    rebuilt = engine_bytes("encoder", plan, {"built_at": "2026-12-02T00:00:00Z"})
    assert len(rebuilt) == len(engine)
    reason = refused(rebuilt + _core.signature_trailer(key, name, rebuilt))
    assert "the SHA-256 of its preamble and header is" in reason
    assert f"{where}.header_sha256 is {entry['header_sha256']}" in reason
    # Missing.
    obstore.delete(fleet.bucket(), object_key)
    reason = refusal(pull, manifest, environment, name)
    assert reason == f"{url} does not exist"

    # The object as published: pulled, and the entry saved before is still the same file.
    fleet.replace(object_key, signed)
    pulled = pull("--manifest", str(manifest), env=environment)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    result = report(pulled)
    assert [item["file_name"] for item in result["pulled"]] == [name]
    assert result["already_present"] == [{"file_name": kept["file_name"]}]
    assert (cache / name).read_bytes() == engine
    assert (cache / "unrelated.bin").read_bytes() == stranger.read_bytes()


@pytest.mark.parametrize(
    "prefix", ["with space/and+plus", "percent%41/semi;colon=eq&amp", "unicodé/日本/~tilde"]
)
def test_odd_keys_are_fetched_exactly(s3_server, tmp_path: Path, pull, prefix: str):
    # The remote cache's prefix holds characters a URL must encode (the key's own file name is
    # made of safe characters): each is percent-encoded once, and the signature is over it.
    fleet = Fleet(s3_server, tmp_path, prefix=prefix)
    engine = engine_bytes("odd", bytes(range(256)) * 8)
    entry = entry_of(fleet, engine)
    manifest = write_manifest(tmp_path / "deploy.json", fleet, [entry])
    pulled = pull("--manifest", str(manifest), env=node(fleet))
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert report(pulled)["remote"] == f"s3://{s3_server.bucket}/{prefix}"
    assert (fleet.cache("node") / entry["file_name"]).read_bytes() == engine


def test_usage_errors_and_a_store_that_refuses(s3_server, tmp_path: Path, pull):
    fleet = Fleet(s3_server, tmp_path)
    engine = engine_bytes("encoder", b"plan" * 64)
    entry = entry_of(fleet, engine)
    manifest = write_manifest(tmp_path / "deploy.json", fleet, [entry])
    environment = node(fleet)

    # Without --manifest the pull is the Python package's: handed to the interpreter (here the
    # tripwire), and where none is found, said.
    handed = subprocess.run(
        [str(tmp_path / "bin" / "tensoracle"), "cache", "pull", entry["file_name"]],
        capture_output=True, text=True, check=False,
        env={**environment, "TENSORACLE_PYTHON": str(tmp_path / "tripwire.sh")},
    )  # fmt: skip
    assert handed.returncode == 99, handed.stderr
    assert (tmp_path / "python-was-run").exists()
    (tmp_path / "python-was-run").unlink()
    by_name = pull(entry["file_name"], env=environment, python=False)
    assert by_name.returncode == 2
    assert "give --manifest FILE" in by_name.stderr
    both = pull(entry["file_name"], "--manifest", str(manifest), env=environment)
    assert both.returncode == 2
    assert "give ENTRY names or --manifest FILE, not both" in both.stderr
    assert "usage: tensoracle cache pull" in both.stderr
    assert pull("--manifest", "", env=environment).returncode == 2
    help_text = pull("--manifest", str(manifest), "--help", env=environment)
    assert help_text.returncode == 0
    assert "--verify-key" in help_text.stdout

    # Wrong credentials: the store's answer, naming the object, and nothing saved.
    wrong = pull("--manifest", str(manifest), env={**environment, "AWS_SECRET_ACCESS_KEY": "x"})
    assert wrong.returncode == 1
    assert f"GET {fleet.url}/{entry['fleet']['key']} answered 403" in wrong.stderr
    assert "SignatureDoesNotMatch" in wrong.stderr
    # No credentials at all: the request goes unsigned, and the refusal says where the native pull
    # looked and what else to do.
    bare = {key: value for key, value in environment.items()
            if key not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}  # fmt: skip
    bare.update(AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "absent-credentials"))
    unsigned = pull("--manifest", str(manifest), "--cache-dir", str(tmp_path / "bare"), env=bare)
    assert unsigned.returncode == 1
    assert f"GET {fleet.url}/{entry['fleet']['key']} answered 403" in unsigned.stderr
    assert "the request was sent unsigned: no credentials were found" in unsigned.stderr
    assert "python -m tensoracle.cli cache pull --manifest" in unsigned.stderr
    assert "sent unsigned" not in wrong.stderr
    # Credentials from the shared file instead of the environment.
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[other]\naws_access_key_id = {s3_server.access_key}\n"
        f"aws_secret_access_key = {s3_server.secret_key}\n"
    )
    from_file = {key: value for key, value in environment.items()
                 if key not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}  # fmt: skip
    from_file.update(AWS_SHARED_CREDENTIALS_FILE=str(credentials), AWS_PROFILE="other")
    pulled = pull("--manifest", str(manifest), env=from_file)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert [item["file_name"] for item in report(pulled)["pulled"]] == [entry["file_name"]]

    # A plain-HTTP endpoint needs AWS_ALLOW_HTTP, as for the Python package.
    plain = pull("--manifest", str(manifest), "--cache-dir", str(tmp_path / "other"),
                 env={**environment, "AWS_ALLOW_HTTP": ""})  # fmt: skip
    assert plain.returncode == 1
    assert "is plain HTTP: set AWS_ALLOW_HTTP=true" in plain.stderr


def test_the_guide_s_provisioning_without_python_runs(s3_server, tmp_path: Path, pull: Pull):
    guide = (REPO / "docs" / "deploy.md").read_text()
    section = guide.split("## Provision a machine without Python\n")[1].split("\n## ")[0]
    [block] = re.findall(r"^```bash\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    lines = [line.split("  #")[0].strip() for line in block.strip().splitlines()]
    exported = {
        word.split("=")[0]
        for line in lines
        if line.startswith("export ")
        for word in line.split()[1:]
    }
    # The variables the guide sets are those the test server gives its clients.
    assert exported == {"AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID",
                        "AWS_SECRET_ACCESS_KEY"}  # fmt: skip
    assert exported <= set(s3_server.environment())
    [command] = [line for line in lines if line.startswith("tensoracle ")]
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "fleet")
    key = _core.SigningKey.from_pem_file(signing)
    entry = entry_of(fleet, engine_bytes("encoder", b"plan" * 300), key)
    manifest = write_manifest(tmp_path / "deploy.json", fleet, [entry])
    sign(manifest, signing)
    replaced = {"deploy.json": str(manifest), "fleet-verify.pem": str(verify)}
    words = [replaced.get(word, word) for word in shlex.split(command)]
    assert words[:3] == ["tensoracle", "cache", "pull"]

    pulled = pull(*words[3:], env=node(fleet))

    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert report(pulled)["pulled"] == [
        {"file_name": entry["file_name"], "size_bytes": entry["engine_bytes"], "signed": True}
    ]
