"""`tensoracle build MODULE:ATTRIBUTE`: a model package's recipes built (real TensorRT-RTX builds of
a tiny graph) and published to the real S3 server; other nodes then get the engines without
calling the graph; failures reported per recipe; usage errors with status 2."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cache_cli import run
from docs_examples import REPO, labelled_blocks, text_blocks
from engine_files import plan_checksum_hex
from remote_support import Fleet, make_keys
from safetensors.numpy import save_file

import tensoracle
from tensoracle import _core
from tensoracle.errors import UntrustedEngineError

TARGETS = ["sm86", "sm89", "sm120"]

# The model package of these tests. Its graph appends a line to $TINYMODEL_CALLS when called,
# and raises when $TINYMODEL_NO_BUILD is set: a node that must download never builds unseen.
PACKAGE = '''
"""tinymodel: a model package that ships recipes for its engines."""

import os
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

import tensoracle
from tensoracle import BuilderSettings, EngineBuild, EngineIO, EngineRecipe, InputShape, TensorSpec

HERE = Path(__file__).parent
trt = tensoracle.backend().module

DECLARATION = EngineBuild(
    inputs={"features": InputShape.ranged((1, 1, 2), (1, 64, 2), (1, 448, 2))},
    settings=BuilderSettings(
        # not part of the identity, but recorded in the header: a way to tell two builds apart
        workspace_limit=int(os.environ.get("TINYMODEL_WORKSPACE_LIMIT", 1 << 30)),
        targets=("sm86", "sm89", "sm120"),
    ),
)
IO = EngineIO(
    inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
    outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
)


def graph_of(weights):
    def graph(network):
        calls = os.environ.get("TINYMODEL_CALLS")
        if calls:
            with open(calls, "a") as log:
                log.write(f"{weights.name}\\n")
        if os.environ.get("TINYMODEL_NO_BUILD"):
            raise AssertionError(f"the graph of {weights.name} was called")
        print("tinymodel: building", weights.name)  # the command keeps its stdout for the report
        bias = load_file(str(weights))["bias"]
        features = network.add_input("features", trt.float32, (1, -1, 2))
        constant = network.add_constant((1, 1, 2), np.ascontiguousarray(bias[None, None, :]))
        result = network.add_elementwise(
            features, constant.get_output(0), trt.ElementWiseOperation.SUM
        ).get_output(0)
        result.name = "result"
        network.mark_output(result)

    return graph


def recipe(name, file_name):
    weights = HERE / file_name
    return EngineRecipe(
        graph_of(weights), DECLARATION, name=name, graph_version="1", weights=[weights], io=IO
    )


def broken_graph(network):
    raise RuntimeError("this graph cannot be built")


def exiting_graph(network):
    os._exit(0)  # skips finally blocks and atexit: the status the command set would be lost


def sys_exiting_graph(network):
    raise SystemExit(0)


RECIPES = [
    recipe("tiny-encoder", "encoder.safetensors"),
    recipe("tiny-decoder", "decoder.safetensors"),
]
WITH_FAILURE = {
    "encoder": RECIPES[0],
    "broken": EngineRecipe(
        broken_graph, DECLARATION, name="tiny-broken", graph_version="1", weights=[], io=IO
    ),
}
NOT_RECIPES = {"encoder": RECIPES[0], "readme": "README.md"}
ENDS_THE_PROCESS = [
    RECIPES[0],
    EngineRecipe(
        exiting_graph, DECLARATION, name="tiny-exit", graph_version="1", weights=[], io=IO
    ),
]
CALLS_SYS_EXIT = [
    EngineRecipe(
        sys_exiting_graph, DECLARATION, name="tiny-sys-exit", graph_version="1", weights=[], io=IO
    ),
    RECIPES[1],
]
'''

# Modules next to tinymodel that end the process while they are imported, and one that ignores
# every warning (the RemoteCacheWarning of an unreachable store included).
MODULES = {
    "broken_at_import": 'raise RuntimeError("broken at import")\n',
    "exits_at_import": "import sys\n\nsys.exit(0)\n",
    "exits_with_text_at_import": 'import sys\n\nsys.exit("no GPU here, nothing to do")\n',
    "ends_at_import": "import os\n\nos._exit(0)\n",
    "killed_at_import": "import os\nimport signal\n\nos.kill(os.getpid(), signal.SIGKILL)\n",
    # an atexit handler that ends the process with 0 after the command reported its failure
    "exits_0_at_shutdown": (
        "import atexit\nimport os\n\natexit.register(os._exit, 0)\nRECIPES = []\n"
    ),
    "quiet_recipes": (
        "import warnings\n\nwarnings.filterwarnings('ignore')\n\nfrom tinymodel import RECIPES\n"
    ),
}


# The test seam that describes a node's GPU (TENSORACLE_DESCRIBED_GPU, docs/engines.md).
RTX_4090 = {
    "TENSORACLE_DESCRIBED_GPU": json.dumps(
        {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
    )
}
H200 = {
    "TENSORACLE_DESCRIBED_GPU": json.dumps({"name": "NVIDIA H200", "compute_capability": "9.0"})
}


MAGIC = b"TSRCLSIG"


def signed_statement(file_name: str, engine: bytes) -> bytes:
    """What a published object's signature signs (docs/deploy.md, remote/object.hpp): for an
    engine file of format 2, the SHA-256 of its preamble and header (which record each plan
    chunk's SHA-256); for format 1, of the whole file."""
    if int.from_bytes(engine[8:12], "little") == 2:
        prefix = engine[: 20 + int.from_bytes(engine[12:20], "little")]
        digest = hashlib.sha256(prefix).hexdigest()
        return f"tensoracle remote engine v2\n{file_name}\n{digest}".encode()
    digest = hashlib.sha256(engine).hexdigest()
    return f"tensoracle remote engine v1\n{file_name}\n{digest}".encode()


def assert_signature_verifies(signature: str, path: Path, verify: Path, scratch: Path) -> None:
    """The manifest's ``signature`` verifies the saved entry at ``path`` with the verify key:
    through the library (the entry followed by the trailer made of it) and, over the statement
    the docs describe, by openssl."""
    engine = path.read_bytes()
    key = _core.VerifyKey.from_pem_file(verify)
    trailer = bytes.fromhex(signature) + MAGIC
    checked = _core.verify_remote_object(engine + trailer, str(path), path.name, None, key)
    assert (checked.is_signed, checked.signer) == (True, key.fingerprint)
    (scratch / "statement").write_bytes(signed_statement(path.name, engine))
    (scratch / "signature").write_bytes(bytes.fromhex(signature))
    openssl = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(verify), "-rawin",
         "-in", str(scratch / "statement"), "-sigfile", str(scratch / "signature")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert openssl.returncode == 0, openssl.stdout + openssl.stderr


def assert_signature_refused(signature: str, path: Path, verify: Path) -> None:
    """The same signature does not verify a changed engine (a plan byte: by the chunk digest its
    signed header records; a header byte: by the signature), nor is a changed signature
    accepted."""
    engine = path.read_bytes()
    key = _core.VerifyKey.from_pem_file(verify)
    plan_changed = engine[:-1] + bytes([engine[-1] ^ 1])
    header_changed = engine[:30] + bytes([engine[30] ^ 1]) + engine[31:]
    flipped = bytes.fromhex(signature)
    flipped = bytes([flipped[0] ^ 1]) + flipped[1:]
    for data, trailer, refusal in (
        (plan_changed, bytes.fromhex(signature) + MAGIC, "does not hold what its signature"),
        (header_changed, bytes.fromhex(signature) + MAGIC, "does not accept"),
        (engine, flipped + MAGIC, "does not accept"),
    ):
        with pytest.raises(UntrustedEngineError, match=refusal):
            _core.verify_remote_object(data + trailer, str(path), path.name, None, key)


def write_package(root: Path) -> Path:
    """tinymodel/ under ``root`` (the directory to put on PYTHONPATH), with its weights."""
    package = root / "tinymodel"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE)
    for name, bias in (("encoder", (0.5, -1.0)), ("decoder", (2.0, 3.0))):
        save_file({"bias": np.array(bias, dtype=np.float32)}, str(package / f"{name}.safetensors"))
    for module, source in MODULES.items():
        (root / f"{module}.py").write_text(source)
    return root


def local_environment(tmp_path: Path, node: str, **extra: str) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key != "TENSORACLE_REMOTE"}
    environment.update(
        XDG_CACHE_HOME=str(tmp_path / node),
        PYTHONPATH=str(tmp_path / "packages"),
        TINYMODEL_CALLS=str(tmp_path / "calls.log"),
    )
    environment.update(extra)
    return environment


def graph_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def report(completed: subprocess.CompletedProcess[str]) -> dict:
    assert completed.stdout.count("\n") == 1, (completed.stdout, completed.stderr)
    return json.loads(completed.stdout)


def column(document: dict, key: str) -> list:
    return [row[key] for row in document["recipes"]]


@pytest.fixture
def packages(tmp_path: Path) -> Path:
    return write_package(tmp_path / "packages")


@pytest.mark.slow
@pytest.mark.backend
def test_build_publishes_and_another_node_gets_the_engines_without_the_graph(
    s3_server, tmp_path: Path, packages: Path
):
    fleet = Fleet(s3_server, tmp_path)
    pythonpath = {"PYTHONPATH": str(packages), "TINYMODEL_CALLS": str(tmp_path / "calls.log")}
    farm = fleet.environment("farm", **pythonpath)

    built = run(
        "build", "tinymodel:RECIPES", "--targets", ",".join(TARGETS), "--push", fleet.url,
        "--format", "json", "--manifest", str(tmp_path / "deploy.json"), env=farm,
    )  # fmt: skip

    assert built.returncode == 0, built.stderr
    document = report(built)
    # The manifest names each published object, unsigned (no signing key here): no signature.
    manifest = json.loads((tmp_path / "deploy.json").read_text())
    assert manifest["remote"] == fleet.url
    assert [entry["fleet"] for entry in manifest["entries"]] == [
        {"key": f"engines/{Path(path).name}", "url": f"{fleet.url}/engines/{Path(path).name}",
         "signed": False, "signature": None}
        for path in column(document, "path")
    ]  # fmt: skip
    assert (document["spec"], document["remote"], document["signed"]) == (
        "tinymodel:RECIPES",
        fleet.url,
        False,
    )
    assert column(document, "name") == ["tiny-encoder", "tiny-decoder"]
    assert column(document, "outcome") == ["built", "built"]
    assert column(document, "published") == ["yes", "yes"]
    assert column(document, "targets") == [TARGETS, TARGETS]
    assert column(document, "error") == [None, None]
    assert (document["built"], document["reused"], document["failed"]) == (2, 0, 0)
    assert "tinymodel: building encoder.safetensors" in built.stderr  # not in the report
    entries = [Path(path) for path in column(document, "path")]
    assert all(path.parent == fleet.cache("farm") for path in entries)
    keys = fleet.object_keys()
    assert sorted(f"engines/{path.name}" for path in entries) == keys  # and no lease is left
    assert fleet.read(keys[0]) == (fleet.cache("farm") / keys[0].split("/")[1]).read_bytes()
    assert graph_calls(tmp_path) == ["encoder.safetensors", "decoder.safetensors"]

    # Another node, with an empty local cache and (described) an RTX 4090, sm89, one of the
    # targets, opens through the recipes: downloads, no build.
    script = (
        "import json, tensoracle, tinymodel\n"
        "encoder, decoder = tinymodel.RECIPES\n"
        "first = encoder.prepare(remote=URL)\n"
        "# open deserializes where a GPU is present, which needs a target of that GPU\n"
        "no_gpu = tensoracle.gpu.absent_reason() is not None\n"
        "second = decoder.open(remote=URL) if no_gpu else decoder.prepare(remote=URL)\n"
        "print(json.dumps([[str(first.path), first.built], [str(second.path), second.built]]))\n"
    ).replace("URL", repr(fleet.url))
    node = subprocess.run(
        [sys.executable, "-c", script],
        env=fleet.environment("fresh", **pythonpath, TINYMODEL_NO_BUILD="1", **RTX_4090),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert node.returncode == 0, node.stderr
    fetched = json.loads(node.stdout)
    assert [Path(path).name for path, _built in fetched] == [path.name for path in entries]
    assert [built for _path, built in fetched] == [False, False]
    assert all(Path(path).parent == fleet.cache("fresh") for path, _built in fetched)
    assert graph_calls(tmp_path) == ["encoder.safetensors", "decoder.safetensors"]

    # A node whose GPU (described: an H200, sm90) is not a target is told so by open, before
    # anything is downloaded or built.
    refused = subprocess.run(
        [
            sys.executable,
            "-c",
            "import tinymodel; tinymodel.RECIPES[0].open(remote=" + repr(fleet.url) + ")",
        ],
        env=fleet.environment("hopper", **pythonpath, TINYMODEL_NO_BUILD="1", **H200),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 1
    assert "EngineTargetError" in refused.stderr
    assert "NVIDIA H200 (sm90), is not among them" in refused.stderr
    assert not list(fleet.cache("hopper").glob("*.engine"))

    # The farm again: its local cache has both, the remote cache too. The manifest reads each
    # object back: unsigned.
    again = run("build", "tinymodel:RECIPES", "--push", fleet.url, "--manifest",
                str(tmp_path / "again.json"), env=farm)  # fmt: skip
    assert json.loads((tmp_path / "again.json").read_text()) == manifest

    assert again.returncode == 0, again.stderr
    header, *rows, summary = again.stdout.splitlines()
    assert header.split() == [
        "NAME", "GRAPH_VERSION", "TARGETS", "OUTCOME", "PUBLISHED", "SECONDS", "ERROR"
    ]  # fmt: skip
    assert [row.split()[:5] for row in rows] == [
        ["tiny-encoder", "1", ",".join(TARGETS), "reused", "already"],
        ["tiny-decoder", "1", ",".join(TARGETS), "reused", "already"],
    ]
    assert summary == (
        f"2 recipes: 0 built, 2 reused, 0 failed; 0 published, 2 already published in {fleet.url}"
    )
    assert len(graph_calls(tmp_path)) == 2

    # Forced: built again, but a published engine is never replaced (create-only).
    published = {key: fleet.read(key) for key in keys}
    forced = run("build", "tinymodel:RECIPES", "--push", fleet.url, "--force-rebuild",
                 "--format", "json",
                 env={**farm, "TINYMODEL_WORKSPACE_LIMIT": str(1 << 29)})  # fmt: skip

    assert forced.returncode == 0, forced.stderr
    assert column(report(forced), "outcome") == ["built", "built"]
    assert column(report(forced), "published") == ["already", "already"]
    assert {key: fleet.read(key) for key in fleet.object_keys()} == published
    assert len(graph_calls(tmp_path)) == 4


@pytest.mark.slow
@pytest.mark.backend
def test_an_engine_already_in_the_local_cache_is_pushed_signed_when_the_remote_lacks_it(
    s3_server, tmp_path: Path, packages: Path
):
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "farm")
    keys = {
        "TENSORACLE_REMOTE_SIGNING_KEY": str(signing),
        "TENSORACLE_REMOTE_VERIFY_KEY": str(verify),
    }
    farm = fleet.environment("farm", PYTHONPATH=str(packages), **keys)

    # TENSORACLE_REMOTE is set
    local = run("build", "tinymodel:RECIPES", "--format", "json", env=farm)

    assert local.returncode == 0, local.stderr
    first = report(local)
    assert first["remote"] is None
    assert column(first, "outcome") == ["built", "built"]
    assert column(first, "published") == ["no", "no"]
    assert fleet.object_keys() == []  # without --push the remote cache is not used

    # --push without a value: $TENSORACLE_REMOTE
    pushed = run("build", "tinymodel:RECIPES", "--push", "--format", "json", "--manifest",
                 str(tmp_path / "signed.json"), env=farm)  # fmt: skip

    assert pushed.returncode == 0, pushed.stderr
    second = report(pushed)
    assert (second["remote"], second["signed"]) == (fleet.url, True)
    assert column(second, "outcome") == ["reused", "reused"]
    assert column(second, "published") == ["yes", "yes"]
    for path in map(Path, column(second, "path")):
        published = fleet.read(f"engines/{path.name}")
        assert published[: path.stat().st_size] == path.read_bytes()
        assert len(published) == path.stat().st_size + _core.SIGNATURE_TRAILER_BYTES
    # The manifest records the signature this build made: the object's, and it verifies the
    # local entry with the verify key alone, without the remote cache.
    manifest = json.loads((tmp_path / "signed.json").read_text())
    for entry, path in zip(manifest["entries"], map(Path, column(second, "path")), strict=True):
        assert entry["fleet"]["signed"] is True
        signature = entry["fleet"]["signature"]
        assert re.fullmatch("[0-9a-f]{128}", signature)
        published = fleet.read(f"engines/{path.name}")
        assert published[-_core.SIGNATURE_TRAILER_BYTES :] == bytes.fromhex(signature) + MAGIC
        assert_signature_verifies(signature, path, verify, tmp_path)
        assert_signature_refused(signature, path, verify)
    # Read by the C++ library as it is (the round trip of its reader).
    assert [item["fleet_key"] for item in _core.read_deploy_manifest(tmp_path / "signed.json")] == [
        entry["fleet"]["key"] for entry in manifest["entries"]
    ]

    # A node with no key at all, whose build finds the objects published (signed, by the farm):
    # its manifest reads each signature back from the object.
    other = fleet.environment("other", PYTHONPATH=str(packages))
    elsewhere = run("build", "tinymodel:RECIPES", "--push", "--format", "json", "--manifest",
                    str(tmp_path / "elsewhere.json"), env=other)  # fmt: skip
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert column(report(elsewhere), "published") == ["already", "already"]
    read_back = json.loads((tmp_path / "elsewhere.json").read_text())
    assert [entry["fleet"] for entry in read_back["entries"]] == [
        entry["fleet"] for entry in manifest["entries"]
    ]

    reader = fleet.environment(
        "reader", PYTHONPATH=str(packages), TENSORACLE_REMOTE_VERIFY_KEY=str(verify)
    )
    refused = run("build", "tinymodel:RECIPES", "--push", env=reader)
    assert refused.returncode == 2
    assert "no signing key" in refused.stderr
    assert refused.stdout == ""


def prefix_sha256(engine: bytes) -> str:
    """The SHA-256 of an engine file's (or published object's) preamble and header."""
    return hashlib.sha256(engine[: 20 + int.from_bytes(engine[12:20], "little")]).hexdigest()


@pytest.mark.slow
@pytest.mark.backend
def test_no_manifest_pairs_an_entry_with_the_signature_of_another_build(
    s3_server, tmp_path: Path, packages: Path
):
    """Where the remote cache holds another build of an entry than the local cache (published
    before a --force-rebuild, or by another node while this one reused its own), the manifest
    would record this build's plan beside a signature over the other's bytes: the build writes
    none and exits 1, naming the recipe, the file, the object and both digests, and the
    published object is left as it is."""
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "farm")
    keys = {
        "TENSORACLE_REMOTE_SIGNING_KEY": str(signing),
        "TENSORACLE_REMOTE_VERIFY_KEY": str(verify),
    }
    farm = fleet.environment("farm", PYTHONPATH=str(packages), **keys)
    manifest = tmp_path / "deploy.json"
    first = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--push", fleet.url,
                "--manifest", str(manifest), env=farm)  # fmt: skip
    assert first.returncode == 0, first.stderr
    written = manifest.read_text()
    published = {key: fleet.read(key) for key in fleet.object_keys()}
    encoder = next(path for path in fleet.cache("farm").glob("tiny-encoder-*.engine"))
    url = f"{fleet.url}/engines/{encoder.name}"

    def assert_refused(built: subprocess.CompletedProcess[str], path: Path) -> None:
        assert built.returncode == 1, built.stderr
        assert (
            f"tensoracle build: --manifest: recipe 'tiny-encoder': {url} holds another build of "
            f"{path.name} than '{path}' (SHA-256 of preamble and header: "
            f"{prefix_sha256(published['engines/' + path.name])} published, "
            f"{prefix_sha256(path.read_bytes())} here)"
        ) in built.stderr
        assert {key: fleet.read(key) for key in fleet.object_keys()} == published

    # Forced, with another workspace limit (recorded in the header): another build, same key.
    forced = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--push", fleet.url,
                 "--force-rebuild", "--manifest", str(manifest),
                 env={**farm, "TINYMODEL_WORKSPACE_LIMIT": str(1 << 29)})  # fmt: skip
    assert_refused(forced, encoder)
    assert manifest.read_text() == written  # the previous manifest, untouched

    # Another node built the entries on its own (without --push), then reuses them to push.
    other = fleet.environment(
        "other", PYTHONPATH=str(packages), TINYMODEL_WORKSPACE_LIMIT=str(1 << 28), **keys
    )
    own = run("build", "tinymodel:RECIPES", "--targets", "sm89", env=other)
    assert own.returncode == 0, own.stderr
    reused = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--push", fleet.url,
                 "--manifest", str(tmp_path / "other.json"), env=other)  # fmt: skip
    assert_refused(reused, fleet.cache("other") / encoder.name)
    assert not (tmp_path / "other.json").exists()

    # As the message says: without the local file the published build is downloaded, and the
    # manifest then holds its signature, which verifies the local entry.
    for path in fleet.cache("other").glob("*.engine"):
        path.unlink()
    fixed = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--push", fleet.url,
                "--manifest", str(tmp_path / "other.json"), env=other)  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    for entry in json.loads((tmp_path / "other.json").read_text())["entries"]:
        path = fleet.cache("other") / entry["file_name"]
        assert path.read_bytes() == published[entry["fleet"]["key"]][: path.stat().st_size]
        assert_signature_verifies(entry["fleet"]["signature"], path, verify, tmp_path)


@pytest.mark.backend
def test_a_failing_recipe_is_reported_in_its_row_and_the_others_still_run(
    tmp_path: Path, packages: Path
):
    environment = local_environment(tmp_path, "farm")

    failed = run("build", "tinymodel:WITH_FAILURE", "--format", "json", env=environment)

    assert failed.returncode == 1
    document = report(failed)
    assert column(document, "name") == ["tiny-encoder", "tiny-broken"]
    assert column(document, "outcome") == ["built", "failed"]
    assert column(document, "error") == [None, "RuntimeError: this graph cannot be built"]
    assert column(document, "path")[1] is None
    assert (document["built"], document["failed"], document["succeeded"]) == (1, 1, False)
    assert "Traceback" in failed.stderr
    assert "this graph cannot be built" in failed.stderr

    table = run("build", "tinymodel:WITH_FAILURE", env=environment)

    assert table.returncode == 1
    rows = table.stdout.splitlines()[1:-1]
    assert rows[0].split()[3] == "reused"
    assert rows[1].split()[3:5] == ["failed", "no"]
    assert rows[1].endswith("RuntimeError: this graph cannot be built")
    assert table.stdout.splitlines()[-1] == (
        "2 recipes: 0 built, 1 reused, 1 failed; nothing published (no --push)"
    )


@pytest.mark.backend
@pytest.mark.parametrize(
    ("spec", "ignoring"),
    [
        ("tinymodel:RECIPES", {}),
        ("tinymodel:RECIPES", {"PYTHONWARNINGS": "ignore"}),
        ("quiet_recipes:RECIPES", {}),  # warnings.filterwarnings("ignore") in the recipe module
    ],
    ids=["warnings-shown", "PYTHONWARNINGS=ignore", "filterwarnings-in-the-recipes"],
)
def test_an_unreachable_remote_cache_fails_the_publishing_not_the_builds(
    tmp_path: Path, packages: Path, spec: str, ignoring: dict[str, str]
):
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens there
    environment = local_environment(
        tmp_path,
        "farm",
        AWS_ENDPOINT_URL=closed,
        AWS_ALLOW_HTTP="true",
        AWS_ACCESS_KEY_ID="nobody",
        AWS_SECRET_ACCESS_KEY="nothing",
        AWS_REGION="us-east-1",
        TENSORACLE_REMOTE_RETRIES="0",
        **ignoring,
    )

    completed = run("build", spec, "--push", "s3://engines/nowhere", env=environment)

    assert completed.returncode == 1, completed.stderr
    _header, *rows, summary = completed.stdout.splitlines()
    assert [row.split()[3:5] for row in rows] == [["built", "no"], ["built", "no"]]
    assert all("publishing failed: " in row and closed in row for row in rows)
    assert summary.endswith("0 published, 0 already published, 2 not published in "
                            "s3://engines/nowhere")  # fmt: skip
    assert completed.stderr.count("): built, not published (publishing failed: ") == 2
    shown = 0 if ignoring or spec.startswith("quiet") else 2
    assert completed.stderr.count("RemoteCacheWarning: remote engine cache unavailable") == shown
    assert len(list((tmp_path / "farm" / "tensoracle").glob("*.engine"))) == 2

    # The JSON report says the same, with the reason in its own field; reused entries too.
    again = run("build", spec, "--push", "s3://engines/nowhere", "--format", "json",
                env=environment)  # fmt: skip

    assert again.returncode == 1, again.stderr
    document = report(again)
    assert column(document, "outcome") == ["reused", "reused"]
    assert column(document, "published") == ["no", "no"]
    assert all(closed in reason for reason in column(document, "publish_reason"))
    assert column(document, "error") == [
        f"publishing failed: {reason}" for reason in column(document, "publish_reason")
    ]
    assert (document["published"], document["already_published"], document["not_published"]) == (
        0,
        0,
        2,
    )
    assert (document["failed"], document["succeeded"]) == (0, False)


@pytest.mark.parametrize(
    ("module", "code"),
    [("exits_at_import", "0"), ("exits_with_text_at_import", "'no GPU here, nothing to do'")],
)
def test_a_module_calling_sys_exit_at_import_is_a_failure_naming_it_and_the_code(
    tmp_path: Path, packages: Path, module: str, code: str
):
    completed = run("build", f"{module}:RECIPES", env=local_environment(tmp_path, "farm"))

    assert completed.returncode == 1, completed.stderr
    assert (
        f"tensoracle build: loading {module}:RECIPES failed: RecipeModuleExit: {module}:RECIPES: "
        f"importing module {module!r} called sys.exit({code}) instead of defining recipes"
    ) in completed.stderr
    assert completed.stdout == ""


def test_a_module_ending_the_process_at_import_is_a_failure_naming_it(
    tmp_path: Path, packages: Path
):
    for arguments in (["ends_at_import:RECIPES"], ["ends_at_import:RECIPES", "--format", "json"]):
        completed = run("build", *arguments, env=local_environment(tmp_path, "farm"))

        assert completed.returncode == 1, completed.stderr
        assert completed.stderr == (
            f"tensoracle build: tensoracle build {' '.join(arguments)} ended with exit status 0 "
            "before it finished (code it ran ended the process, for example with os._exit); "
            "nothing it reported counts\n"
        )
        assert completed.stdout == ""


def test_a_module_killed_at_import_is_a_failure_naming_the_signal(tmp_path: Path, packages: Path):
    completed = run("build", "killed_at_import:RECIPES", env=local_environment(tmp_path, "farm"))

    assert completed.returncode == 128 + 9, completed.stderr
    assert completed.stderr == (
        "tensoracle build: tensoracle build killed_at_import:RECIPES was ended by signal 9\n"
    )
    assert completed.stdout == ""


def test_an_exit_status_changed_at_shutdown_keeps_the_reported_failure(
    tmp_path: Path, packages: Path
):
    completed = run("build", "exits_0_at_shutdown:RECIPES", env=local_environment(tmp_path, "farm"))

    assert completed.returncode == 2, completed.stderr  # the empty list: invalid usage
    assert "exits_0_at_shutdown:RECIPES is an empty list: it holds no recipe" in completed.stderr
    assert completed.stderr.endswith(
        "tensoracle build: tensoracle build exits_0_at_shutdown:RECIPES finished with exit status "
        "2 but the process then exited with status 0 (code it ran changed it while the "
        "interpreter shut down)\n"
    )


@pytest.mark.backend
def test_a_recipe_ending_the_process_while_it_builds_is_a_failure(tmp_path: Path, packages: Path):
    environment = local_environment(tmp_path, "farm")

    completed = run("build", "tinymodel:ENDS_THE_PROCESS", "--format", "json", env=environment)

    assert completed.returncode == 1, completed.stderr
    assert completed.stderr.endswith(
        "tensoracle build: tensoracle build tinymodel:ENDS_THE_PROCESS --format json ended with "
        "exit status 0 before it finished (code it ran ended the process, for example with "
        "os._exit); nothing it reported counts\n"
    )
    assert completed.stdout == ""  # the report is printed after the last recipe
    assert graph_calls(tmp_path) == ["encoder.safetensors"]  # built before the exit

    # sys.exit in a recipe is that recipe's failure; the others still run
    called = run("build", "tinymodel:CALLS_SYS_EXIT", "--format", "json", env=environment)

    assert called.returncode == 1, called.stderr
    document = report(called)
    assert column(document, "outcome") == ["failed", "built"]
    assert column(document, "error") == [
        "SystemExit: the recipe called sys.exit(0) while it was prepared",
        None,
    ]
    assert document["succeeded"] is False


@pytest.mark.backend
def test_targets_replace_the_recipes_own(tmp_path: Path, packages: Path):
    environment = local_environment(tmp_path, "farm")

    built = run(
        "build", "tinymodel:RECIPES", "--targets", "sm89", "--format", "json", env=environment
    )

    assert built.returncode == 0, built.stderr
    document = report(built)
    assert column(document, "targets") == [["sm89"], ["sm89"]]
    assert column(document, "outcome") == ["built", "built"]
    # The deprecated --json still prints the JSON document, and says to use --format json.
    declared = run("build", "tinymodel:RECIPES", "--json", env=environment)
    assert declared.returncode == 0, declared.stderr
    assert column(report(declared), "outcome") == ["built", "built"]  # sm86,sm89,sm120: others
    assert column(report(declared), "targets") == [TARGETS, TARGETS]
    assert "tensoracle build: --json is deprecated; use --format json\n" in declared.stderr
    again = run("build", "tinymodel:RECIPES", "--format", "json", env=environment)
    assert column(report(again), "outcome") == ["reused", "reused"]
    assert "deprecated" not in again.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["nocolon"], "'nocolon' is not MODULE:ATTRIBUTE"),
        (["tinymodel:"], "'tinymodel:' is not MODULE:ATTRIBUTE"),
        (["no_such_model_package:RECIPES"], "No module named 'no_such_model_package'"),
        (["tinymodel:MISSING"], "module 'tinymodel' has no attribute 'MISSING'"),
        (["tinymodel:NOT_RECIPES"], "tinymodel:NOT_RECIPES['readme'] is 'README.md' (str)"),
        (["tinymodel:RECIPES", "--targets", "sm8x"], "--targets 'sm8x'"),
        (["tinymodel:RECIPES", "--targets", "sm89,sm89"], "twice"),
        (["tinymodel:RECIPES", "--push", "https://example.com/x"], "is not an s3://BUCKET"),
        (["tinymodel:RECIPES", "--push"], "no remote cache"),
        (["tinymodel:RECIPES", "--force"], "unrecognized arguments: --force"),
        (["tinymodel:RECIPES", "--format", "yaml"], "--format: 'yaml' is not an output format"),
        (["tinymodel:RECIPES", "--json", "--format", "table"], "cannot be combined with"),
        ([], "MODULE:ATTRIBUTE"),
    ],
)
def test_usage_errors_exit_2_and_build_nothing(tmp_path: Path, packages: Path, arguments, message):
    completed = run("build", *arguments, env=local_environment(tmp_path, "farm"))

    assert completed.returncode == 2, completed.stderr
    assert message in completed.stderr
    assert "usage: tensoracle build MODULE:ATTRIBUTE" in completed.stderr
    assert completed.stdout == ""
    assert graph_calls(tmp_path) == []
    assert not (tmp_path / "farm").exists()


def test_a_package_that_fails_to_import_is_a_failure_with_its_traceback(
    tmp_path: Path, packages: Path
):
    completed = run("build", "broken_at_import:RECIPES", env=local_environment(tmp_path, "farm"))

    assert completed.returncode == 1
    assert "loading broken_at_import:RECIPES failed: RuntimeError: broken at import" in (
        completed.stderr
    )
    assert "Traceback" in completed.stderr
    assert completed.stdout == ""


def test_help_describes_the_command():
    helped = run("build", "--help")

    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: tensoracle build")
    for option in ("--targets", "--push", "--force-rebuild", "--format json|table"):
        assert option in helped.stdout
    assert "--json" not in helped.stdout  # deprecated: still accepted, no longer offered
    listed = run("--help")
    assert "build" in listed.stdout


@pytest.mark.slow
@pytest.mark.backend
def test_the_recipes_guide_runs(s3_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    guide = "docs/recipes.md"
    blocks = labelled_blocks(guide)
    [package] = [code for label, code in blocks if label == "package"]
    users = [code for label, code in blocks if label != "package"]
    root = tmp_path / "packages"
    (root / "mymodel").mkdir(parents=True)
    (root / "mymodel" / "__init__.py").write_text("")
    (root / "mymodel" / "engines.py").write_text(package)
    bias = np.array([0.5, -1.0], dtype=np.float32)
    save_file({"bias": bias}, str(root / "mymodel" / "encoder.safetensors"))
    fleet = Fleet(s3_server, tmp_path)
    documented_url = "s3://my-engines/fleet-a"
    bash = re.findall(r"^```bash\n(.*?)^```", (REPO / guide).read_text(), re.DOTALL | re.MULTILINE)
    [command] = [line for block in bash for line in block.splitlines() if line.startswith("tensor")]

    completed = run(
        *shlex.split(command.replace(documented_url, fleet.url))[1:],
        env=fleet.environment("farm", PYTHONPATH=str(root)),
    )

    assert completed.returncode == 0, completed.stderr
    [shown] = text_blocks(guide)
    expected = shown.replace(documented_url, fleet.url).splitlines()
    printed = completed.stdout.splitlines()
    assert len(printed) == len(expected) == 3
    assert printed[0] == expected[0]
    assert printed[1].split()[:5] == expected[1].split()[:5]  # all but the seconds
    assert printed[2] == expected[2]

    device = tensoracle.gpu.properties()
    if device is not None:
        capability = str(device["compute_capability"]).replace(".", "")
        if f"sm{capability}" not in ("sm86", "sm89", "sm120"):
            pytest.skip(f"the guide's recipe has no target for this GPU (sm{capability})")
    for name, value in fleet.environment("user").items():
        monkeypatch.setenv(name, value)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(tmp_path)
    try:
        for number, code in enumerate(users, start=1):
            exec(compile(code, f"{guide} (user block {number})", "exec"), {"__name__": "__docs__"})
    finally:
        for name in ("mymodel.engines", "mymodel"):
            sys.modules.pop(name, None)
    assert capsys.readouterr().out.splitlines()[-1] == "downloaded or reused"
    assert [path.name for path in fleet.cache("user").glob("*.engine")] == [
        path.name for path in fleet.cache("farm").glob("*.engine")
    ]


@pytest.mark.slow
@pytest.mark.backend
def test_the_manifest_describes_each_prepared_entry_from_its_saved_file(
    tmp_path: Path, packages: Path
):
    environment = local_environment(tmp_path, "farm")
    manifest = tmp_path / "deploy" / "deploy.json"
    manifest.parent.mkdir()

    built = run(
        "build", "tinymodel:RECIPES", "--targets", "sm89", "--manifest", str(manifest),
        "--format", "json", env=environment,
    )  # fmt: skip

    assert built.returncode == 0, built.stderr
    rows = report(built)["recipes"]
    document = json.loads(manifest.read_text())
    assert document["schema_version"] == 1
    assert document["spec"] == "tinymodel:RECIPES"
    assert document["remote"] is None
    assert oct(manifest.stat().st_mode & 0o777) == "0o644"
    assert [entry["recipe"] for entry in document["entries"]] == column(report(built), "name")
    # docs/deploy.md shows the same fields, each entry's too.
    documented = json.loads(
        (REPO / "docs" / "deploy.md").read_text().split("```json\n")[1].split("```")[0]
    )
    assert documented.keys() == document.keys()
    assert all(entry.keys() == documented["entries"][0].keys() for entry in document["entries"])
    assert documented["entries"][0]["fleet"].keys() == {"key", "url", "signed", "signature"}
    assert re.fullmatch("[0-9a-f]{128}", documented["entries"][0]["fleet"]["signature"])
    for entry, row in zip(document["entries"], rows, strict=True):
        path = Path(row["path"])
        assert entry["file_name"] == path.name
        assert entry["graph_version"] == row["graph_version"]
        assert entry["engine_bytes"] == path.stat().st_size
        # The conditions are the saved header's, and they are the entry's identity.
        data = path.read_bytes()
        conditions, references, offset = _core.decode_engine_header(data, len(data), str(path))
        assert entry["conditions"] == conditions
        assert _core.make_identity(conditions).file_name == path.name
        assert entry["backend"] == "tensorrt_rtx"
        assert entry["targets"] == ["sm89"]
        assert entry["hardware_compatibility"] is None
        assert entry["io"] == references["io"]
        assert entry["plan"]["size"] == len(data) - offset
        assert entry["plan"]["xxh3_128"] == plan_checksum_hex(data[offset:])
        assert entry["fleet"] is None
    # The C++ library reads the same entries back: each file name the identity of its conditions.
    read = _core.read_deploy_manifest(manifest)
    assert [(item["recipe"], item["file_name"]) for item in read] == [
        (entry["recipe"], entry["file_name"]) for entry in document["entries"]
    ]
    assert [item["plan_xxh3_128"] for item in read] == [
        entry["plan"]["xxh3_128"] for entry in document["entries"]
    ]
    assert all(item["targets"] == ["sm89"] and item["fleet_key"] is None for item in read)
    # A second run (reusing the entries) replaces the manifest whole; no temporary is left.
    again = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--manifest", str(manifest),
                env=environment)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(manifest.read_text()) == document
    assert sorted(item.name for item in manifest.parent.iterdir()) == ["deploy.json"]
    # A manifest edited by hand so that a file name is not its entry's is refused by the reader.
    document["entries"][0]["file_name"] = document["entries"][1]["file_name"]
    manifest.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=r"entries\[0\]\.file_name is .* but the identity"):
        _core.read_deploy_manifest(manifest)


@pytest.mark.slow
@pytest.mark.backend
def test_a_manifest_that_cannot_be_written_fails_the_build_naming_it(
    tmp_path: Path, packages: Path
):
    environment = local_environment(tmp_path, "farm")
    missing = tmp_path / "no-such-folder" / "deploy.json"
    built = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--manifest", str(missing),
                env=environment)  # fmt: skip
    assert built.returncode == 1
    assert f"tensoracle build: --manifest: cannot write the manifest {missing}" in built.stderr
    assert not missing.parent.exists()
    # Refused before anything was built.
    assert not list((tmp_path / "farm").rglob("*.engine"))
    assert "(graph_version" not in built.stderr, built.stderr

    fifo = tmp_path / "deploy.fifo"
    os.mkfifo(fifo)
    for value, problem in [
        ("", "it is not a file name"),
        (str(tmp_path), "it is a directory"),
        (str(fifo), "it is not a regular file (a FIFO, socket or device)"),
        (str(tmp_path / ("m" * 256)), "its name is longer than the 255 bytes allowed"),
    ]:
        refused = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--manifest", value,
                      env=environment)  # fmt: skip
        assert refused.returncode == 1, (value, refused.stderr)
        assert problem in refused.stderr, (value, refused.stderr)
    assert not list((tmp_path / "farm").rglob("*.engine"))


@pytest.mark.slow
@pytest.mark.backend
def test_a_manifest_may_have_the_longest_name_the_file_system_allows(
    tmp_path: Path, packages: Path
):
    longest = tmp_path / ("m" * 250 + ".json")  # 255 bytes
    built = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--manifest", str(longest),
                env=local_environment(tmp_path, "farm"))  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert len(json.loads(longest.read_text())["entries"]) == 2
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".manifest-")] == []
