"""`tensoracle cache pull --manifest FILE` against the real S3 server: the manifest a real
TensorRT-RTX build wrote (`tensoracle build --push --manifest`), exactly its entries pulled, each
checked against it; a changed object or manifest is refused naming the entry and field, leaving
no file; a saved entry is judged from its header; the documented provisioning runs. Each test
runs twice: through the `tensoracle` command, whose --manifest pull is native (C++), and through
the Python package's pull (`python -m tensoracle.cli`), which pulls by name too."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cache_cli import run
from cutting_proxy import counting_proxy
from docs_examples import REPO
from engine_files import engine_file_bytes, plan_checksum_hex
from remote_support import Fleet, make_keys, store_files
from test_build_command import write_package

from tensoracle import _core
from tensoracle.errors import UntrustedEngineError

pytestmark = [pytest.mark.slow, pytest.mark.backend]

Pull = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(params=["native", "python"])
def pull(request: pytest.FixtureRequest) -> Pull:
    """Runs `tensoracle cache pull ARGS`: the native command's, or the Python package's."""
    if request.param == "native":
        return lambda *args, env: run("cache", "pull", *args, env=env)

    def python_pull(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tensoracle.cli", "cache", "pull", *args],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip

    return python_pull


RTX_4090 = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}

# Next to tinymodel (test_build_command): its first recipe alone.
ENCODER_ONLY = "from tinymodel import RECIPES\n\nENCODER = RECIPES[0]\n"


@pytest.fixture
def packages(tmp_path: Path) -> Path:
    root = write_package(tmp_path / "packages")
    (root / "encoder_only.py").write_text(ENCODER_ONLY)
    return root


def report(completed) -> dict:
    assert completed.stdout.count("\n") == 1, (completed.stdout, completed.stderr)
    return json.loads(completed.stdout)


def names(items: list[dict]) -> list[str]:
    return [item["file_name"] for item in items]


def node_environment(fleet: Fleet, node: str, **extra: str) -> dict[str, str]:
    """A node that knows the store's endpoint and credentials but no remote cache URL: the
    manifest names it."""
    environment = fleet.environment(node, **extra)
    environment.pop("TENSORACLE_REMOTE")
    return environment


def plain_document(manifest: Path) -> dict:
    """The manifest's document: the file itself, or a signed manifest's predicate."""
    document = json.loads(manifest.read_text())
    if "payloadType" not in document:
        return document
    return json.loads(base64.b64decode(document["payload"]))["predicate"]


def build_manifest(
    fleet: Fleet, packages: Path, manifest: Path, sign: Path | None = None, **extra: str
) -> dict:
    """The encoder built, published and in the manifest (signed with ``sign``); then both
    recipes published, so the remote cache holds an engine the manifest does not name."""
    farm = fleet.environment("farm", PYTHONPATH=str(packages), **extra)
    signing = [] if sign is None else ["--sign-key", str(sign)]
    built = run("build", "encoder_only:ENCODER", "--targets", "sm89", "--push",
                "--manifest", str(manifest), *signing, env=farm)  # fmt: skip
    assert built.returncode == 0, built.stderr
    both = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--push", env=farm)
    assert both.returncode == 0, both.stderr
    assert len(fleet.object_keys()) == 2
    return plain_document(manifest)


def test_pulls_exactly_the_manifest_entries_from_its_remote(
    s3_server, tmp_path: Path, packages: Path, pull: Pull
):
    fleet = Fleet(s3_server, tmp_path)
    manifest = tmp_path / "deploy.json"
    document = build_manifest(fleet, packages, manifest)
    [entry] = document["entries"]
    node = node_environment(fleet, "node")

    pulled = pull("--manifest", str(manifest), env=node)

    assert pulled.returncode == 0, pulled.stderr
    result = report(pulled)
    assert result["remote"] == fleet.url == document["remote"]  # the manifest's
    assert names(result["pulled"]) == [entry["file_name"]]
    assert result["pulled"][0]["size_bytes"] == entry["engine_bytes"]
    assert (result["already_present"], result["refused"]) == ([], [])
    # Only the manifest's entry: the other published engine stays remote.
    saved = fleet.cache("node") / entry["file_name"]
    assert store_files(fleet.cache("node")) == [entry["file_name"]]
    assert saved.read_bytes() == fleet.read(entry["fleet"]["key"])
    assert (fleet.cache("farm") / entry["file_name"]).read_bytes() == saved.read_bytes()

    # Again: judged from its header, already present; a table says so too.
    again = pull("--manifest", str(manifest), "--format", "table", env=node)
    assert again.returncode == 0, again.stderr
    assert re.search(rf"^{re.escape(entry['file_name'])}\s+already present", again.stdout, re.M)
    assert "0 pulled, 1 already present, 0 refused" in again.stdout

    # --remote (or $TENSORACLE_REMOTE) names another remote cache instead of the manifest's.
    elsewhere = pull("--manifest", str(manifest), "--remote",
                    f"s3://{s3_server.bucket}/nothing-here", "--cache-dir",
                    str(tmp_path / "empty"), env=node)  # fmt: skip
    assert elsewhere.returncode == 1
    [missing] = report(elsewhere)["refused"]
    assert missing["reason"] == (
        f"s3://{s3_server.bucket}/nothing-here/engines/{entry['file_name']} does not exist"
    )
    assert not list((tmp_path / "empty").glob("*.engine"))


def test_a_signed_manifest_is_pulled_with_the_verify_key(
    s3_server, tmp_path: Path, packages: Path, pull: Pull
):
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "farm")
    manifest = tmp_path / "deploy.json"
    document = build_manifest(
        fleet, packages, manifest, signing, TENSORACLE_REMOTE_SIGNING_KEY=str(signing)
    )
    [entry] = document["entries"]
    assert entry["fleet"]["signed"] is True
    node = node_environment(fleet, "node", TENSORACLE_REMOTE_VERIFY_KEY=str(verify))

    pulled = pull("--manifest", str(manifest), env=node)

    assert pulled.returncode == 0, pulled.stderr
    [item] = report(pulled)["pulled"]
    assert (item["file_name"], item["signed"]) == (entry["file_name"], True)
    # The C++ library opens the pulled entry with the verify key and the manifest's signature
    # alone (no remote cache); with another key's, it refuses it.
    opened = _core.open_deployed(
        manifest, entry["recipe"], RTX_4090, entry["backend"], entry["backend_version"],
        fleet.cache("node"), verify,
    )  # fmt: skip
    assert Path(opened.path).name == entry["file_name"]
    assert opened.signer == _core.VerifyKey.from_pem_file(verify).fingerprint
    _stranger, stranger = make_keys(tmp_path, "stranger")
    with pytest.raises(UntrustedEngineError):
        _core.open_deployed(
            manifest, entry["recipe"], RTX_4090, entry["backend"], entry["backend_version"],
            fleet.cache("node"), stranger,
        )  # fmt: skip

    # Published again under the same key with another key's signature (same engine bytes): the
    # manifest's signature no longer matches, refused before it is saved.
    key = entry["fleet"]["key"]
    engine = fleet.read(key)[: -_core.SIGNATURE_TRAILER_BYTES]
    other_signing, _other_verify = make_keys(tmp_path, "other")
    other = _core.SigningKey.from_pem_file(other_signing)
    fleet.replace(key, engine + _core.signature_trailer(other, entry["file_name"], engine))
    # A node without the verify key refuses the signed manifest itself; given its document as a
    # plain manifest, only the manifest's record of the signature tells.
    fresh = node_environment(fleet, "fresh")
    unverified = pull("--manifest", str(manifest), env=fresh)
    assert unverified.returncode == 1
    assert "is a signed manifest, but no verify key or trust policy is set" in unverified.stderr
    manifest = tmp_path / "plain.json"
    manifest.write_text(json.dumps(document))
    refused = pull("--manifest", str(manifest), env=fresh)
    assert refused.returncode == 1
    [item] = report(refused)["refused"]
    assert item["file_name"] == entry["file_name"]
    assert f"{manifest}: entries[0].fleet.signature" in item["reason"]
    assert not fleet.cache("fresh").exists() or store_files(fleet.cache("fresh")) == []

    # The same object unsigned: refused from its size, before its body.
    fleet.replace(key, engine)
    unsigned = pull("--manifest", str(manifest), env=fresh)
    assert unsigned.returncode == 1
    [item] = report(unsigned)["refused"]
    assert "it is unsigned" in item["reason"]
    assert f"{manifest}: entries[0].fleet.signature" in item["reason"]
    assert not fleet.cache("fresh").exists() or store_files(fleet.cache("fresh")) == []


def test_an_object_or_manifest_changed_since_is_refused_naming_the_entry_and_field(
    s3_server, tmp_path: Path, packages: Path, pull: Pull
):
    fleet = Fleet(s3_server, tmp_path)
    manifest = tmp_path / "deploy.json"
    document = build_manifest(fleet, packages, manifest)
    [entry] = document["entries"]
    name, key = entry["file_name"], entry["fleet"]["key"]
    node = node_environment(fleet, "node")
    original = fleet.read(key)

    def refusal(path: Path = manifest) -> str:
        pulled = pull("--manifest", str(path), env=node)
        assert pulled.returncode == 1, pulled.stderr
        result = report(pulled)
        assert (result["pulled"], result["already_present"]) == ([], [])
        [item] = result["refused"]
        assert item["file_name"] == name
        assert not fleet.cache("node").exists() or store_files(fleet.cache("node")) == []
        return item["reason"]

    # Another engine of the same conditions, of the same size, published under the key: its
    # plan's checksum differs (a valid engine file: every other check passes).
    offset = len(original) - entry["plan"]["size"]
    conditions = entry["conditions"]
    plan = bytes(byte ^ 0x5A for byte in original[offset:])
    references = _core.decode_engine_header(original, len(original), key)[1]
    fleet.replace(key, _same_size_engine(conditions, references, plan, len(original)))
    reason = refusal()
    assert f"the remote engine {fleet.url}/{key} is not the entry {manifest}: entries[0]" in reason
    assert f"{manifest}: entries[0].plan.xxh3_128 is {entry['plan']['xxh3_128']!r}" in reason

    # A larger engine: refused from its size, naming engine_bytes.
    fleet.replace(key, engine_file_bytes(conditions, references, plan + b"more"))
    reason = refusal()
    assert f"{manifest}: entries[0].engine_bytes is {entry['engine_bytes']}" in reason

    # The other recipe's engine published under this entry's key: other conditions.
    [other] = [item for item in fleet.object_keys() if item != key]
    decoder = fleet.read(other)
    found, recorded, start = _core.decode_engine_header(decoder, len(decoder), other)
    same_size = _same_size_engine(found, recorded, decoder[start:], len(original))
    fleet.replace(key, same_size)
    reason = refusal()
    assert "its conditions differ in" in reason
    assert "name" in reason.split("differ in")[1]
    assert f"({manifest}: entries[0].conditions)" in reason

    # The object as published, the manifest edited to another checksum.
    fleet.replace(key, original)
    edited = json.loads(manifest.read_text())
    edited["entries"][0]["plan"]["xxh3_128"] = "0" * 32
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(edited))
    reason = refusal(tampered)
    assert f"{tampered}: entries[0].plan.xxh3_128 is '{'0' * 32}'" in reason
    assert f"its header records {entry['plan']['xxh3_128']!r}" in reason

    # The original manifest pulls it; the edited one refuses the saved copy, which stays.
    assert pull("--manifest", str(manifest), env=node).returncode == 0
    saved = fleet.cache("node") / name
    before = saved.read_bytes()
    again = pull("--manifest", str(tampered), env=node)
    assert again.returncode == 1
    [item] = report(again)["refused"]
    assert item["reason"].startswith(f"the saved entry {saved} is not the entry {tampered}")
    assert f"{tampered}: entries[0].plan.xxh3_128" in item["reason"]
    assert saved.read_bytes() == before  # never deleted, never replaced


def _same_size_engine(conditions: dict, references: dict, plan: bytes, size: int) -> bytes:
    """A valid engine file holding ``plan`` with ``conditions``, padded (in its references) to
    exactly ``size`` bytes (which the build's time, left out, makes room for)."""
    references = {key: value for key, value in references.items() if key != "build_milliseconds"}
    data = engine_file_bytes(conditions, {**references, "pad": ""}, plan)
    assert len(data) <= size
    return engine_file_bytes(conditions, {**references, "pad": " " * (size - len(data))}, plan)


def test_usage_and_manifest_errors(s3_server, tmp_path: Path, packages: Path, pull: Pull):
    fleet = Fleet(s3_server, tmp_path)
    manifest = tmp_path / "deploy.json"
    document = build_manifest(fleet, packages, manifest)
    node = node_environment(fleet, "node")

    both = pull(document["entries"][0]["file_name"], "--manifest", str(manifest),
               env=node)  # fmt: skip
    assert both.returncode == 2
    assert "give ENTRY names or --manifest FILE, not both" in both.stderr
    assert "usage: tensoracle cache pull" in both.stderr
    assert pull("--manifest", "", env=node).returncode == 2

    missing = pull("--manifest", str(tmp_path / "absent.json"), env=node)
    assert missing.returncode == 1
    assert str(tmp_path / "absent.json") in missing.stderr

    broken = json.loads(manifest.read_text())
    broken["entries"][0]["plan"]["size"] = "12"
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps(broken))
    refused = pull("--manifest", str(invalid), env=node)
    assert refused.returncode == 1
    assert f"{invalid}: entries[0].plan.size is" in refused.stderr
    assert refused.stdout == ""

    # Written without --push: no remote in it, none configured.
    local = dict(document, remote=None)
    unpublished = tmp_path / "local.json"
    unpublished.write_text(json.dumps(local))
    none = pull("--manifest", str(unpublished), env=node)
    assert none.returncode == 2
    assert f"no remote cache: {unpublished} records none" in none.stderr
    assert not fleet.cache("node").exists() or store_files(fleet.cache("node")) == []


def test_the_provisioning_guide_runs(s3_server, tmp_path: Path, packages: Path, pull: Pull):
    pull_command = pull
    guide = (REPO / "docs" / "deploy.md").read_text()
    section = guide.split("## Provision a machine\n")[1].split("\n## ")[0]
    commands = [
        " ".join(line.rstrip("\\").strip() for line in block.strip().splitlines())
        for block in re.findall(r"^```bash\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    ]
    assert len(commands) == 2
    fleet = Fleet(s3_server, tmp_path)
    manifest = tmp_path / "deploy.json"

    def words(command: str) -> list[str]:
        command = command.replace("s3://models/engines", fleet.url).replace("mymodel", "tinymodel")
        return [str(manifest) if word == "deploy.json" else word for word in shlex.split(command)]

    build, pull = (words(command) for command in commands)
    assert build[:2] == ["tensoracle", "build"]
    assert pull[:3] == ["tensoracle", "cache", "pull"]
    built = run(*build[1:], env=fleet.environment("farm", PYTHONPATH=str(packages)))
    assert built.returncode == 0, built.stderr
    entries = json.loads(manifest.read_text())["entries"]

    pulled = pull_command(*pull[3:], env=node_environment(fleet, "node"))

    assert pulled.returncode == 0, pulled.stderr
    assert sorted(names(report(pulled)["pulled"])) == sorted(names(entries))
    assert store_files(fleet.cache("node")) == sorted(names(entries))


def published_entry(
    fleet: Fleet, manifest: Path, name: str, targets: list[str], plan: bytes
) -> tuple[Any, bytes]:
    """An RTX entry whose header records `targets` as given (unsorted too), published to the
    fleet, and the manifest naming it by its recorded identity: (identity, engine file bytes)."""
    conditions = {"name": name, "graph_version": "1", "backend": "tensorrt_rtx",
                  "backend_version": "1.7.1.116", "gpu": None, "targets": targets}  # fmt: skip
    identity = _core.recorded_identity(conditions)
    engine = engine_file_bytes(conditions, {}, plan)
    fleet.replace(f"engines/{identity.file_name}", engine)
    manifest.write_text(json.dumps({
        "schema_version": 1, "spec": f"{name}:RECIPES", "remote": fleet.url,
        "entries": [{
            "recipe": name, "graph_version": "1", "file_name": identity.file_name,
            "conditions": conditions, "backend": "tensorrt_rtx", "backend_version": "1.7.1.116",
            "targets": targets, "hardware_compatibility": None, "io": None,
            "plan": {"size": len(plan), "xxh3_128": plan_checksum_hex(plan)},
            "engine_bytes": len(engine), "fleet": None,
        }],
    }))  # fmt: skip
    return identity, engine


def test_an_entry_saved_with_unsorted_targets_is_pulled_under_its_name_and_old_temporaries_go(
    s3_server, tmp_path: Path, pull: Pull
):
    # An entry saved before targets were sorted keeps the name its header's conditions give: the
    # C++ reader judges the manifest by that name, and the pull (which once computed the sorted
    # identity in Python and said "changed while it was read") expects the same.
    fleet = Fleet(s3_server, tmp_path)
    manifest = tmp_path / "deploy.json"
    recorded, engine = published_entry(
        fleet, manifest, "old", ["sm89", "sm86"], bytes(range(256)) * 16
    )
    assert recorded.file_name != _core.make_identity(recorded.conditions).file_name

    # A pull killed before (SIGTERM) left its temporary file; the next pull removes it.
    cache = fleet.cache("n")
    cache.mkdir(parents=True)
    killed = cache / f"{recorded.file_name}.tmp-999999999-abcdef"
    killed.write_bytes(engine[:100])

    pulled = pull("--manifest", str(manifest), env=node_environment(fleet, "n"))

    assert pulled.returncode == 0, pulled.stderr
    assert names(report(pulled)["pulled"]) == [recorded.file_name]
    assert (cache / recorded.file_name).read_bytes() == engine
    assert not killed.exists()


@pytest.mark.parametrize("kind", ["fifo", "link", "dangling link", "directory"])
def test_a_fifo_link_or_folder_at_an_entry_s_name_is_refused_at_once_naming_it(
    s3_server, tmp_path: Path, kind: str, pull: Pull
):
    # A FIFO there once hung the pull, and a link was followed and reported already present.
    fleet = Fleet(s3_server, tmp_path)
    manifest = tmp_path / "deploy.json"
    identity, engine = published_entry(fleet, manifest, "e", ["sm89"], bytes(range(256)) * 4)
    cache = fleet.cache("n")
    cache.mkdir(parents=True)
    planted = cache / identity.file_name
    real = tmp_path / "elsewhere.engine"
    real.write_bytes(engine)  # the very entry, outside the cache folder
    if kind == "fifo":
        os.mkfifo(planted)
        expected = f"'{planted}' is not a regular file (a FIFO, socket or device)"
    elif kind == "directory":
        planted.mkdir()
        expected = f"'{planted}' is a directory, not a saved engine file"
    else:
        planted.symlink_to(real if kind == "link" else tmp_path / "nothing")
        expected = f"'{planted}' is a symbolic link; tensoracle does not follow links"

    pulled = pull("--manifest", str(manifest), env=node_environment(fleet, "n"))

    assert pulled.returncode == 1, pulled.stderr
    result = report(pulled)
    assert (result["pulled"], result["already_present"]) == ([], [])
    [refused] = result["refused"]
    assert refused["file_name"] == identity.file_name
    assert expected in refused["reason"]
    assert real.read_bytes() == engine  # nothing written through the link


def test_an_object_of_another_size_is_refused_from_its_size_before_its_body(
    s3_server, tmp_path: Path, pull: Pull
):
    # 100 bytes more than the manifest's engine_bytes, and not a 72-byte signature trailer more:
    # refused from the size the answer announces; what reached the client is counted at the
    # proxy, a small part of the 64 MiB object (what was in flight when the pull let go).
    fleet = Fleet(s3_server, tmp_path)
    manifest = tmp_path / "deploy.json"
    recorded, engine = published_entry(fleet, manifest, "big", ["sm89"], os.urandom(64 << 20))
    fleet.replace(f"engines/{recorded.file_name}", engine + bytes(100))
    with counting_proxy(fleet.server.port) as relay:
        env = node_environment(fleet, "n", AWS_ENDPOINT_URL=relay.endpoint)
        pulled = pull("--manifest", str(manifest), env=env)
        served = relay.served
    assert pulled.returncode == 1, pulled.stdout + pulled.stderr
    [item] = report(pulled)["refused"]
    assert item["file_name"] == recorded.file_name
    assert f"{manifest}: entries[0].engine_bytes is {len(engine)}" in item["reason"]
    assert f"the object holds {len(engine) + 100} bytes" in item["reason"]
    assert served < 16 << 20, served  # of an answer of 64 MiB (4 MB seen: socket buffers)
    assert not fleet.cache("n").exists() or store_files(fleet.cache("n")) == []
