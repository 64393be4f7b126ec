"""`tensoracle build --encrypt-to` end to end, against the real S3 server: a real TensorRT-RTX
build saved sealed for a node's X25519 key and published; the published object put in another
node's cache folder and opened there with the node's private key through Python
(``SavedEngine.opened_plan``, ``_core.open_deployed`` whole and streamed, ``open_engine``) and
through the C++ library (the native ``tensoracle cache export --decrypt-key``, a deployed open):
every one of them hands out the same plan, of the size the header records. Then every file the
test's processes wrote (both cache folders, their temporary folders, the manifest, the S3
server's folder) and every object in the bucket is searched for any 4 KiB of that plan: only the
file ``cache export`` wrote, the plan asked for, holds one. The entry is also pulled by the
manifest and fetched through the remote cache by a node that opens it with the key."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from cache_cli import run
from docs_examples import REPO, labelled_blocks
from plaintext_scan import WINDOW, files_holding, window_in
from remote_support import Fleet
from safetensors.numpy import save_file
from test_build_command import write_package
from x25519_keys import key_id, make_key

from tensoracle import EngineKeyError, _core

pytestmark = [pytest.mark.slow, pytest.mark.backend]

RTX_4090 = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
ENCODER_ONLY = "from tinymodel import RECIPES\n\nENCODER = RECIPES[0]\n"

# A node opening the encoder through its recipe (open_engine), with the key and without a build:
# prints the SHA-256 of the handle's plan and whether it built.
OPEN_WITH_KEY = """
import hashlib, json, sys
import tinymodel
handle = tinymodel.RECIPES[0].with_targets(["sm89"]).open(decrypt_key=sys.argv[1])
print(json.dumps([hashlib.sha256(bytes(handle.plan)).hexdigest(), handle.built]))
"""


@pytest.fixture
def packages(tmp_path: Path) -> Path:
    root = write_package(tmp_path / "packages")
    (root / "encoder_only.py").write_text(ENCODER_ONLY)
    return root


def node_environment(fleet: Fleet, node: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    """A node's environment: the store's endpoint and credentials, its own cache folder, and
    its own temporary folder (scanned with the rest)."""
    temporary = tmp_path / "tmp" / node
    temporary.mkdir(parents=True, exist_ok=True)
    return fleet.environment(node, TMPDIR=str(temporary), **extra)


@dataclass(frozen=True)
class Published:
    """An encoder built with --encrypt-to the node's key and published: its saved file, the
    header's encryption member, the manifest, and the keys."""

    saved: Path
    engine: bytes
    sealing: dict
    manifest: Path
    node_key: Path
    other_key: Path

    @property
    def key(self) -> str:
        return f"engines/{self.saved.name}"


def build_encrypted(fleet: Fleet, tmp_path: Path, packages: Path) -> Published:
    keys = tmp_path / "keys"
    keys.mkdir()
    node_key, node_pub = make_key(keys, "node")
    other_key, _other_pub = make_key(keys, "other")
    manifest = tmp_path / "deploy.json"
    farm = node_environment(fleet, "farm", tmp_path, PYTHONPATH=str(packages))

    built = run("build", "encoder_only:ENCODER", "--targets", "sm89", "--encrypt-to",
                str(node_pub), "--push", fleet.url, "--manifest", str(manifest),
                "--format", "json", env=farm)  # fmt: skip

    assert built.returncode == 0, built.stderr
    [row] = json.loads(built.stdout)["recipes"]
    assert (row["outcome"], row["published"], row["error"]) == ("built", "yes", None)
    saved = Path(row["path"])
    engine = saved.read_bytes()
    assert int.from_bytes(engine[8:12], "little") == 3
    header = json.loads(engine[20 : 20 + int.from_bytes(engine[12:20], "little")])
    sealing = header["encryption"]
    assert [recipient["key"] for recipient in sealing["recipients"]] == [key_id(node_pub)]
    published = Published(saved, engine, sealing, manifest, node_key, other_key)
    assert fleet.object_keys() == [published.key]
    assert fleet.read(published.key) == engine  # the fleet holds the sealed entry, as saved

    # Again: the entry saved here is sealed for the key, so it is reused, and found published.
    again = run("build", "encoder_only:ENCODER", "--targets", "sm89", "--encrypt-to",
                str(node_pub), "--push", fleet.url, "--format", "json", env=farm)  # fmt: skip
    assert again.returncode == 0, again.stderr
    [row] = json.loads(again.stdout)["recipes"]
    assert (row["outcome"], row["published"], row["error"]) == ("reused", "already", None)
    assert saved.read_bytes() == engine
    return published


def test_an_engine_built_encrypted_is_published_and_opened_elsewhere_with_the_key_only(
    s3_server, tmp_path: Path, packages: Path
):
    fleet = Fleet(s3_server, tmp_path)
    built = build_encrypted(fleet, tmp_path, packages)
    saved, node_key, other_key = built.saved, built.node_key, built.other_key

    # Another node's cache folder gets the published object as it is (copied from the bucket,
    # as a store's own tools would; the next test pulls it).
    node = node_environment(fleet, "node", tmp_path, PYTHONPATH=str(packages))
    node.pop("TENSORACLE_REMOTE")
    _core.Store(str(fleet.cache("node")))  # the folder, made as the store makes it
    copy = fleet.cache("node") / saved.name
    copy.write_bytes(fleet.read(built.key))
    copy.chmod(0o600)
    [entry] = json.loads(built.manifest.read_text())["entries"]

    # (i) Python: the store's saved entry, opened with the key only.
    stored = _core.Store(str(fleet.cache("node"))).read(
        _core.recorded_identity(entry["conditions"])
    )
    assert stored.encrypted
    with pytest.raises(EngineKeyError, match="is encrypted"):
        stored.plan  # noqa: B018
    with pytest.raises(EngineKeyError, match="is not encrypted for"):
        stored.opened_plan(decrypt_key=str(other_key))
    plan = stored.opened_plan(decrypt_key=str(node_key))
    assert len(plan) == built.sealing["plan_size"] > 4 * WINDOW
    assert stored.opened_plan(decrypt_key_pem=node_key.read_text()) == plan

    # The C++ deployed open, through the bindings, for a described RTX 4090: whole and streamed.
    arguments = (str(built.manifest), entry["recipe"], RTX_4090, entry["backend"],
                 entry["backend_version"], str(fleet.cache("node")), None)  # fmt: skip
    with pytest.raises(EngineKeyError, match="is encrypted"):
        _core.open_deployed(*arguments)
    with pytest.raises(EngineKeyError, match="is not encrypted for"):
        _core.open_deployed(*arguments, decrypt_key=str(other_key))
    deployed = _core.open_deployed(*arguments, decrypt_key=str(node_key))
    assert bytes(deployed.plan) == plan
    streamed = _core.open_deployed(*arguments, stream_plan=True, decrypt_key=str(node_key))
    assert streamed.streamed
    assert streamed.plan is None
    pieces, offset = [], 0
    while piece := streamed.read_plan(offset, 3 << 20):
        pieces.append(piece)
        offset += len(piece)
    assert b"".join(pieces) == plan

    # open_engine on the node, through the recipe: the saved entry, decrypted, no build.
    assert node_open(node, node_key) == [hashlib.sha256(plan).hexdigest(), False]

    # (ii) The C++ library's deployed open, by the native command: the plan written out.
    exported_plan = tmp_path / "exported" / "encoder.plan"
    exported_plan.parent.mkdir()
    exported = run("cache", "export", saved.name, "--plan", str(exported_plan), "--decrypt-key",
                   str(node_key), "--cache-dir", str(fleet.cache("node")), env=node)  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert exported_plan.read_bytes() == plan

    # No file written anywhere holds 4 KiB of the plan, but the export asked for; nor does any
    # object in the bucket. The export itself is found: the search finds what is there.
    assert window_in(plan, exported_plan.read_bytes()) == 0
    assert files_holding(plan, [tmp_path, s3_server.root], exclude=[exported_plan]) == {}
    assert fleet.object_keys() == [built.key]
    assert window_in(plan, fleet.read(built.key)) is None


def node_open(environment: dict[str, str], key: Path) -> list:
    """[SHA-256 of the plan, built] of the encoder opened by a node with ``key``."""
    opened = subprocess.run(
        [sys.executable, "-c", OPEN_WITH_KEY, str(key)],
        env={**environment, "TINYMODEL_NO_BUILD": "1",
             "TENSORACLE_DESCRIBED_GPU": json.dumps(RTX_4090)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert opened.returncode == 0, opened.stderr
    assert "RemoteCacheWarning" not in opened.stderr
    return json.loads(opened.stdout)


def test_an_encrypted_entry_is_pulled_and_fetched_as_it_was_published(
    s3_server, tmp_path: Path, packages: Path
):
    fleet = Fleet(s3_server, tmp_path)
    built = build_encrypted(fleet, tmp_path, packages)

    # Pulled by the manifest (the native pull): the sealed file, checked without a key.
    node = node_environment(fleet, "node", tmp_path, PYTHONPATH=str(packages))
    node.pop("TENSORACLE_REMOTE")
    pulled = run("cache", "pull", "--manifest", str(built.manifest), env=node)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert (fleet.cache("node") / built.saved.name).read_bytes() == built.engine
    [entry] = json.loads(built.manifest.read_text())["entries"]
    stored = _core.Store(str(fleet.cache("node"))).read(
        _core.recorded_identity(entry["conditions"])
    )
    plan = stored.opened_plan(decrypt_key=str(built.node_key))
    assert len(plan) == built.sealing["plan_size"]
    assert node_open(node, built.node_key) == [hashlib.sha256(plan).hexdigest(), False]

    # A node with an empty cache folder, through the remote cache ($TENSORACLE_REMOTE): the
    # sealed object fetched and saved as it is, opened with the key; no build.
    fetcher = node_environment(fleet, "fetcher", tmp_path, PYTHONPATH=str(packages))
    assert node_open(fetcher, built.node_key) == [hashlib.sha256(plan).hexdigest(), False]
    assert (fleet.cache("fetcher") / built.saved.name).read_bytes() == built.engine
    assert files_holding(plan, [tmp_path, s3_server.root]) == {}


def test_a_plain_copy_published_before_is_reported_not_replaced(
    s3_server, tmp_path: Path, packages: Path
):
    """A remote object that is not the encrypted entry saved here (a plain build published
    before) is never replaced, and the build says so: not published."""
    fleet = Fleet(s3_server, tmp_path)
    _node_key, node_pub = make_key(tmp_path, "node")
    first = node_environment(fleet, "first", tmp_path, PYTHONPATH=str(packages))
    plain = run("build", "encoder_only:ENCODER", "--targets", "sm89", "--push", fleet.url,
                env=first)  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    [key] = fleet.object_keys()
    published = fleet.read(key)
    assert int.from_bytes(published[8:12], "little") == 2

    # Another node without the entry: it fetches the plain object, which is not sealed for its
    # keys, builds and saves the engine encrypted, and cannot publish it.
    farm = node_environment(fleet, "farm", tmp_path, PYTHONPATH=str(packages))
    sealed = run("build", "encoder_only:ENCODER", "--targets", "sm89", "--encrypt-to",
                 str(node_pub), "--push", fleet.url, "--format", "json", env=farm)  # fmt: skip
    assert sealed.returncode == 1, sealed.stderr
    [row] = json.loads(sealed.stdout)["recipes"]
    assert (row["outcome"], row["published"]) == ("built", "no")
    assert "holds another copy of this entry than the encrypted one saved here" in row["error"]
    assert int.from_bytes(Path(row["path"]).read_bytes()[8:12], "little") == 3
    assert fleet.read(key) == published


def test_encrypt_to_is_checked_before_anything_is_built(tmp_path: Path, packages: Path):
    environment = {
        **os.environ,
        "PYTHONPATH": str(packages),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TINYMODEL_NO_BUILD": "1",
    }
    (tmp_path / "not-a-key.pub").write_text("hello\n")
    for key, message in (
        (tmp_path / "missing.pub", "missing.pub"),
        (tmp_path / "not-a-key.pub", "not-a-key.pub"),
    ):
        refused = run("build", "encoder_only:ENCODER", "--encrypt-to", str(key), env=environment)
        assert refused.returncode == 2, refused.stderr
        assert f"--encrypt-to {key}: " in refused.stderr
        assert message in refused.stderr
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.engine"))


def test_the_encryption_guides_build_command_runs(s3_server, tmp_path: Path):
    """docs/encryption.md's `tensoracle build --encrypt-to` line, run as written (against this
    test's share of the S3 server, $TENSORACLE_REMOTE) on the package of docs/recipes.md."""
    [package] = [code for label, code in labelled_blocks("docs/recipes.md") if label == "package"]
    root = tmp_path / "packages"
    (root / "mymodel").mkdir(parents=True)
    (root / "mymodel" / "__init__.py").write_text("")
    (root / "mymodel" / "engines.py").write_text(package)
    bias = np.array([0.5, -1.0], dtype=np.float32)
    save_file({"bias": bias}, str(root / "mymodel" / "encoder.safetensors"))
    recipients = [make_key(tmp_path, name)[1] for name in ("node-a", "node-b")]
    bash = re.findall(r"^```bash\n(.*?)^```", (REPO / "docs" / "encryption.md").read_text(),
                      re.DOTALL | re.MULTILINE)  # fmt: skip
    [command] = [line for block in bash for line in block.splitlines() if "--encrypt-to" in line]
    fleet = Fleet(s3_server, tmp_path)

    completed = run(
        *shlex.split(command)[1:],
        env=node_environment(fleet, "farm", tmp_path, PYTHONPATH=str(root)),
        cwd=tmp_path,
    )

    assert completed.returncode == 0, completed.stderr
    [key] = fleet.object_keys()
    published = fleet.read(key)
    assert int.from_bytes(published[8:12], "little") == 3
    header = json.loads(published[20 : 20 + int.from_bytes(published[12:20], "little")])
    assert sorted(recipient["key"] for recipient in header["encryption"]["recipients"]) == sorted(
        key_id(public) for public in recipients
    )
    assert (fleet.cache("farm") / key.split("/")[1]).read_bytes() == published
