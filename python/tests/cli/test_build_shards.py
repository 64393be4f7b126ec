"""`tensoracle build --shard I/N` and `tensoracle manifest merge`: the split of a package's
recipes into disjoint parts, the same on every machine; and the GitHub Actions matrix and the
Kubernetes Indexed Job of docs/sharded-builds.md, read from the page and their commands run for
four parts at once against the real S3 server (real TensorRT-RTX builds of a tiny graph): every
recipe built exactly once, the merged manifest equal to the one an unsharded build writes."""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from cache_cli import run, tensoracle_executable
from docs_examples import REPO
from remote_support import Fleet
from safetensors.numpy import save_file

from tensoracle.cli.build_shard import Shard, ShardError, parse_shard, positions, record

DOC = REPO / "docs" / "sharded-builds.md"
NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]

# mymodel/engines.py: five recipes of a tiny graph; each call of a graph is logged.
ENGINES = """
import os
import signal
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

import tensoracle
from tensoracle import BuilderSettings, EngineBuild, EngineIO, EngineRecipe, InputShape, TensorSpec

HERE = Path(__file__).parent
trt = tensoracle.backend().module
DECLARATION = EngineBuild(
    inputs={"features": InputShape.ranged((1, 1, 2), (1, 8, 2), (1, 16, 2))},
    settings=BuilderSettings(targets=("sm89",)),
)
IO = EngineIO(
    inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
    outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
)


def graph_of(name):
    def graph(network):
        with open(os.environ["MYMODEL_CALLS"], "a") as log:
            log.write(name + "\\n")
        # A machine that dies while it builds: once, for the recipe MYMODEL_KILL names.
        killed = Path(os.environ.get("MYMODEL_CALLS") + ".killed")
        if os.environ.get("MYMODEL_KILL") == name and not killed.exists():
            killed.write_text(name)
            os.kill(os.getpid(), signal.SIGKILL)
        bias = load_file(str(HERE / f"{name}.safetensors"))["bias"]
        features = network.add_input("features", trt.float32, (1, -1, 2))
        constant = network.add_constant((1, 1, 2), np.ascontiguousarray(bias[None, None, :]))
        result = network.add_elementwise(
            features, constant.get_output(0), trt.ElementWiseOperation.SUM
        ).get_output(0)
        result.name = "result"
        network.mark_output(result)

    return graph


RECIPES = [
    EngineRecipe(graph_of(name), DECLARATION, name=name, graph_version="1",
                 weights=[HERE / f"{name}.safetensors"], io=IO)
    for name in NAMES
]
"""


@dataclass(frozen=True)
class Named:
    """What the split reads of a recipe: its name and graph version."""

    name: str
    graph_version: str


def recipes(*pairs: tuple[str, str]) -> list[Any]:
    return [Named(name, version) for name, version in pairs]


def test_every_recipe_is_in_exactly_one_part_whatever_the_order_of_the_recipes():
    built = recipes(*[(f"r{index:02d}", "1") for index in range(11)], ("r03", "2"), ("r03", "2"))
    for count in (1, 2, 3, 4, 13, 20):
        parts = [positions(built, Shard(index, count)) for index in range(count)]
        assigned = sorted(position for part in parts for position in part)
        assert assigned == list(range(len(built))), count
        # balanced: parts differ by at most one recipe
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
        shuffled = built[:]
        random.Random(count).shuffle(shuffled)
        for index in range(count):
            mine = {id(built[position]) for position in parts[index]}
            theirs = positions(shuffled, Shard(index, count))
            # the same recipes, by name, graph version and occurrence
            assert sorted((built[p].name, built[p].graph_version) for p in parts[index]) == sorted(
                (shuffled[p].name, shuffled[p].graph_version) for p in theirs
            )
            assert len(mine) == len(theirs)
    # The record lists every recipe of the build in the package's order.
    assert record(built, Shard(1, 4))["recipes"][11:] == [
        {"recipe": "r03", "graph_version": "2"},
        {"recipe": "r03", "graph_version": "2"},
    ]


@pytest.mark.parametrize(
    ("text", "environment", "expected"),
    [
        ("0/4", {}, Shard(0, 4)),
        ("3/4", {}, Shard(3, 4)),
        ("auto/4", {"JOB_COMPLETION_INDEX": "2"}, Shard(2, 4)),
        ("auto/4", {"TENSORACLE_SHARD_INDEX": "1"}, Shard(1, 4)),
        ("auto/4", {"JOB_COMPLETION_INDEX": "3", "TENSORACLE_SHARD_INDEX": "1"}, Shard(3, 4)),
    ],
)
def test_a_shard_is_given_or_read_from_the_environment(text, environment, expected):
    assert parse_shard(text, environment) == expected


@pytest.mark.parametrize(
    ("text", "environment", "message"),
    [
        ("4/4", {}, "--shard '4/4': I=4 is not a part of 4 (0 to 3)"),
        ("1", {}, "--shard '1': expected I/N (such as 0/4) or auto/N"),
        ("1/0", {}, "--shard '1/0': N is 0; at least 1 part is needed"),
        ("-1/4", {}, "--shard '-1/4': I is '-1', not a whole number"),
        ("x/4", {}, "--shard 'x/4': I is 'x', not a whole number"),
        ("auto/4", {}, "no part index in the environment: set JOB_COMPLETION_INDEX or "
                       "TENSORACLE_SHARD_INDEX"),
        ("auto/4", {"JOB_COMPLETION_INDEX": "4"}, "JOB_COMPLETION_INDEX=4 is not a part of 4"),
        ("auto/4", {"JOB_COMPLETION_INDEX": "two"}, "JOB_COMPLETION_INDEX is 'two', not a whole"),
    ],
)  # fmt: skip
def test_a_shard_that_names_no_part_is_refused_naming_the_value(text, environment, message):
    with pytest.raises(ShardError, match=re.escape(message)):
        parse_shard(text, environment)


def test_an_invalid_shard_is_a_usage_error_before_anything_is_built(tmp_path: Path):
    completed = run("build", "mymodel.engines:RECIPES", "--shard", "4/4", env={
        **os.environ, "XDG_CACHE_HOME": str(tmp_path)})  # fmt: skip
    assert completed.returncode == 2, completed.stderr
    assert "--shard '4/4': I=4 is not a part of 4 (0 to 3)" in completed.stderr
    assert not (tmp_path / "tensoracle").exists()


def yaml_blocks() -> list[dict[str, Any]]:
    return [
        yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)
    ]


def bash_lines() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(), re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def write_package(root: Path) -> Path:
    package = root / "mymodel"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "engines.py").write_text(f"NAMES = {NAMES!r}\n" + ENGINES)
    for number, name in enumerate(NAMES):
        bias = np.array([number, -number], dtype=np.float32)
        save_file({"bias": bias}, str(package / f"{name}.safetensors"))
    return root


def run_parts(commands: list[list[str]], environments: list[dict[str, str]]) -> None:
    """Runs the commands at once (one process per part) and waits for every one."""
    processes = [
        subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for command, environment in zip(commands, environments, strict=True)
    ]  # fmt: skip
    for process in processes:
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0, (process.args, out, err)


def tensoracle(words: list[str]) -> list[str]:
    assert words[0] == "tensoracle", words
    return [tensoracle_executable(), *words[1:]]


def build_once_and_unsharded(fleet: Fleet, tmp_path: Path, manifest: Path) -> None:
    """Every recipe built exactly once by the parts, and the merged manifest equal to the one an
    unsharded build writes (on another machine, from what the parts published)."""
    calls = tmp_path / "calls.log"
    assert sorted(calls.read_text().split()) == NAMES
    unsharded = tmp_path / "unsharded.json"
    completed = run(
        "build", "mymodel.engines:RECIPES", "--push", "--manifest", str(unsharded),
        env=fleet.environment("other", PYTHONPATH=str(tmp_path / "packages"),
                              MYMODEL_CALLS=str(calls)),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert sorted(calls.read_text().split()) == NAMES  # downloaded, not built again
    assert manifest.read_text() == unsharded.read_text()


@pytest.mark.slow
@pytest.mark.backend
def test_the_github_actions_matrix_builds_each_recipe_once_and_merges_the_manifest(
    s3_server, tmp_path: Path
):
    workflow = next(block for block in yaml_blocks() if "jobs" in block)
    build = workflow["jobs"]["build"]
    merge = workflow["jobs"]["manifest"]
    assert merge["needs"] == "build"
    fleet = Fleet(s3_server, tmp_path)
    write_package(tmp_path / "packages")
    work = tmp_path / "artifacts"
    work.mkdir()
    commands, environments = [], []
    for shard in build["strategy"]["matrix"]["shard"]:
        runs = [
            step["run"] for step in build["steps"] if step.get("run", "").startswith("tensoracle ")
        ]
        assert len(runs) == 1, runs
        line = runs[0].replace("${{ matrix.shard }}", str(shard))
        words = shlex.split(line)
        words[words.index("--manifest") + 1] = str(work / words[words.index("--manifest") + 1])
        commands.append(tensoracle(words))
        # The job's env names the remote cache; here it is the test server's.
        assert set(build["env"]) == {"TENSORACLE_REMOTE"}
        environments.append(fleet.environment(
            f"runner-{shard}", PYTHONPATH=str(tmp_path / "packages"),
            MYMODEL_CALLS=str(tmp_path / "calls.log")))  # fmt: skip
    run_parts(commands, environments)
    merges = [
        step["run"] for step in merge["steps"] if step.get("run", "").startswith("tensoracle ")
    ]
    assert len(merges) == 1, merges
    words = shlex.split(merges[0])
    words = [str(work / word) if word.endswith(".json") else word for word in words]
    merged = subprocess.run(tensoracle(words), capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stderr
    build_once_and_unsharded(fleet, tmp_path, work / "deploy.json")


def kubernetes_expansion(text: str, environment: dict[str, str]) -> str:
    """$(NAME) replaced by the container's variable, as Kubernetes expands a command."""
    return re.sub(r"\$\((\w+)\)", lambda found: environment[found.group(1)], text)


@pytest.mark.slow
@pytest.mark.backend
def test_the_kubernetes_indexed_job_builds_each_recipe_once_and_merges_the_manifest(
    s3_server, tmp_path: Path
):
    job = next(block for block in yaml_blocks() if block.get("kind") == "Job")
    assert job["spec"]["completionMode"] == "Indexed"
    count = job["spec"]["completions"]
    assert job["spec"]["parallelism"] == count
    container = job["spec"]["template"]["spec"]["containers"][0]
    mount = container["volumeMounts"][0]["mountPath"]
    assert [item["name"] for item in container["env"]] == ["TENSORACLE_REMOTE"]
    fleet = Fleet(s3_server, tmp_path)
    write_package(tmp_path / "packages")
    volume = tmp_path / "volume"
    volume.mkdir()
    commands, environments = [], []
    for index in range(count):
        # What Kubernetes gives the pod of each index, and the volume at its mount path.
        environment = fleet.environment(
            f"pod-{index}", PYTHONPATH=str(tmp_path / "packages"),
            MYMODEL_CALLS=str(tmp_path / "calls.log"), JOB_COMPLETION_INDEX=str(index))  # fmt: skip
        words = [kubernetes_expansion(word, environment) for word in container["command"]]
        words = [word.replace(mount, str(volume)) for word in words]
        commands.append(tensoracle(words))
        environments.append(environment)
    run_parts(commands, environments)
    (line,) = [line for line in bash_lines() if line.startswith("tensoracle manifest merge /")]
    words = [word.replace(mount, str(volume)) for word in shlex.split(line)]
    merged = subprocess.run(tensoracle(words), capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stderr
    build_once_and_unsharded(fleet, tmp_path, volume / "deploy.json")


def test_merge_refuses_a_missing_part_naming_it(tmp_path: Path):
    recipe_list = [{"recipe": name, "graph_version": "1"} for name in NAMES]
    part = {"schema_version": 1, "spec": "mymodel.engines:RECIPES", "remote": None, "entries": [],
            "shard": {"index": 1, "count": 2, "recipes": recipe_list}}  # fmt: skip
    (tmp_path / "deploy-1.json").write_text(json.dumps(part))
    completed = run("manifest", "merge", str(tmp_path / "deploy-1.json"), "-o",
                    str(tmp_path / "deploy.json"))  # fmt: skip
    assert completed.returncode == 1
    assert "parts 0 of 2 are missing: merge the manifest of every part (1 given)" in (
        completed.stderr
    )
    assert not (tmp_path / "deploy.json").exists()


@pytest.mark.slow
@pytest.mark.backend
def test_a_part_killed_while_it_builds_is_run_again_and_takes_over_its_lease(
    s3_server, tmp_path: Path
):
    fleet = Fleet(s3_server, tmp_path)
    write_package(tmp_path / "packages")
    lines = [line for line in bash_lines() if line.startswith("tensoracle build ")]
    assert len(lines) == 4
    merge_line = next(
        line for line in bash_lines() if line.startswith("tensoracle manifest merge d")
    )
    calls = tmp_path / "calls.log"
    # The part that builds "charlie" dies in its graph, holding charlie's build lease.
    victim = next(
        index for index in range(4) if "charlie" in [NAMES[p] for p in positions(
            recipes(*[(name, "1") for name in NAMES]), Shard(index, 4))]
    )  # fmt: skip

    def environment(index: int) -> dict[str, str]:
        return fleet.environment(
            f"machine-{index}", PYTHONPATH=str(tmp_path / "packages"), MYMODEL_CALLS=str(calls),
            MYMODEL_KILL="charlie", TENSORACLE_REMOTE_LEASE_SECONDS="6")  # fmt: skip

    commands = [tensoracle(shlex.split(line.replace("deploy-", f"{tmp_path}/deploy-")))
                for line in lines]  # fmt: skip
    processes = [
        subprocess.Popen(command, env=environment(index), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for index, command in enumerate(commands)
    ]  # fmt: skip
    out, err = processes[victim].communicate(timeout=900)
    # Ended by SIGKILL, which the command reports as a shell does.
    assert processes[victim].returncode == 128 + signal.SIGKILL, (out, err)
    # It died holding charlie's build lease: the lease object is there, not yet expired.
    leases = [key for key in fleet.object_keys() if key.startswith("leases/charlie-")]
    assert leases, fleet.object_keys()
    assert json.loads(fleet.read(leases[-1]))["expires_at"] > time.time()
    for index, process in enumerate(processes):
        if index != victim:
            out, err = process.communicate(timeout=900)
            assert process.returncode == 0, (out, err)
    assert not (tmp_path / f"deploy-{victim}.json").exists()
    # Its re-run waits for the lease the dead part left to expire, then builds charlie.
    rerun = subprocess.run(commands[victim], env=environment(victim), capture_output=True,
                           text=True, check=False, timeout=900)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(calls.read_text().split()) == sorted([*NAMES, "charlie"])
    # The re-run took the lease over, published charlie and released every generation.
    assert [key for key in fleet.object_keys() if key.startswith("leases/charlie-")] == []
    words = [str(tmp_path / word) if word.endswith(".json") else word
             for word in shlex.split(merge_line)]  # fmt: skip
    merged = subprocess.run(tensoracle(words), capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stderr
    document = json.loads((tmp_path / "deploy.json").read_text())
    assert [entry["recipe"] for entry in document["entries"]] == NAMES
    assert all(entry["fleet"]["url"].startswith(fleet.url) for entry in document["entries"])
