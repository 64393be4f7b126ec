"""examples/cpp_inference, built as its README says against the installed package's tensoracle/cpp,
TensorRT 11.1's headers (`make tensorrt-11-headers`), pip's TensorRT 11.4 lean runtime and pip's
CUDA headers; then run without a GPU to its refusals, each printed with the error's message and
exit status 1 (2 for a wrong command line), and, with TENSORACLE_DESCRIBED_GPU, through the
selection of an entry for the loaded TensorRT to the refusal of an entry not in the cache folder.
Running an engine needs a GPU and TensorRT 11 engines: tools/gpu_check's machines."""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
from importlib.metadata import distribution, version
from pathlib import Path

import pytest

from tensoracle import _core

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "cpp_inference"
SCRIPTS = Path(sysconfig.get_paths()["scripts"])
SITE = Path(sysconfig.get_paths()["purelib"])
TENSORRT_HEADERS = REPO / "build" / "tensorrt-headers" / "11.1.0.106" / "include"
LEAN_LIBRARY = SITE / "tensorrt_lean_libs" / "libnvinfer_lean.so.11"
CUDA_HEADERS = SITE / "nvidia" / "cu13" / "include"
BASE_ENV = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
DESCRIBED = '{"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}'


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # make test provides every one of these; a missing one is a broken setup, not a skip.
    for path in (TENSORRT_HEADERS, LEAN_LIBRARY, CUDA_HEADERS):
        assert path.exists(), f"'{path}' is missing (make tensorrt-11-headers, make venv)"
    build = tmp_path_factory.mktemp("cpp_inference")
    package = Path(str(distribution("tensoracle").locate_file("tensoracle/cpp")))
    for command in (
        [
            str(SCRIPTS / "cmake"),
            "-S",
            str(EXAMPLE),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={SCRIPTS / 'ninja'}",
            f"-DCMAKE_PREFIX_PATH={package}",
            f"-DTENSORRT_INCLUDE_DIR={TENSORRT_HEADERS}",
            f"-DTENSORRT_LIBRARY={LEAN_LIBRARY}",
            f"-DCUDA_INCLUDE_DIR={CUDA_HEADERS}",
        ],
        [str(SCRIPTS / "cmake"), "--build", str(build)],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=BASE_ENV)
        assert done.returncode == 0, done.stdout + done.stderr
    return build / "cpp_inference"


def run(program: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(program), *arguments],
        capture_output=True,
        text=True,
        check=False,
        env={**BASE_ENV, **environment},
    )


def test_a_wrong_command_line_prints_the_usage_and_exits_2(example: Path):
    result = run(example, "deploy.json")
    assert result.returncode == 2
    assert result.stderr == "usage: cpp_inference MANIFEST RECIPE_NAME\n"


def test_a_missing_manifest_is_refused_naming_it(example: Path, tmp_path: Path):
    manifest = tmp_path / "deploy.json"
    result = run(example, str(manifest), "encoder")
    assert result.returncode == 1
    assert result.stderr.startswith("cpp_inference: ")
    assert str(manifest) in result.stderr


def test_without_a_gpu_the_driver_s_reason_is_printed(example: Path, tmp_path: Path):
    reason = _core.gpu_absent_reason()
    if reason is None:
        pytest.skip("this machine has a GPU")
    manifest = tmp_path / "deploy.json"
    manifest.write_text('{"schema_version": 1, "spec": "m:R", "remote": null, "entries": []}')
    result = run(example, str(manifest), "encoder")
    assert result.returncode == 1
    assert result.stderr == f"cpp_inference: no GPU can be described on this machine: {reason}\n"


def entry(recipe: str, backend: str, backend_version: str, **runs_on: object) -> dict[str, object]:
    """A manifest entry as `tensoracle build --manifest` writes one (its file is not cached)."""
    conditions = {"name": recipe, "graph_version": "1", "backend": backend}
    conditions |= {"backend_version": backend_version, **runs_on}
    identity = _core.make_identity(json.dumps(conditions))
    return {
        "recipe": recipe,
        "graph_version": "1",
        "file_name": identity.file_name,
        "conditions": conditions,
        "backend": backend,
        "backend_version": backend_version,
        "targets": runs_on.get("targets"),
        "hardware_compatibility": runs_on.get("hardware_compatibility"),
        "io": None,
        "plan": {"size": 1024, "xxh3_128": "0" * 32},
        "engine_bytes": 1500,
        "fleet": None,
    }


def test_it_selects_for_the_loaded_tensorrt_says_why_and_refuses_an_entry_not_pulled(
    example: Path, tmp_path: Path
):
    # The 11.1 headers run the 11.4 lean runtime (the same major version): entries are selected
    # for the library's version, which manifests record as the version that built an entry.
    library = version("tensorrt_lean_cu13_libs")
    tensorrt = entry("encoder", "tensorrt", library, gpu=None, hardware_compatibility="ampere_plus")
    rtx = entry("encoder", "tensorrt_rtx", "1.7.1.116", gpu=None, targets=["sm86", "sm89"])
    manifest = tmp_path / "deploy.json"
    document = {"schema_version": 1, "spec": "m:R", "remote": None, "entries": [rtx, tensorrt]}
    manifest.write_text(json.dumps(document))
    cache = tmp_path / "cache"
    result = run(
        example,
        str(manifest),
        "encoder",
        TENSORACLE_DESCRIBED_GPU=DESCRIBED,
        XDG_CACHE_HOME=str(cache),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "GPU: NVIDIA GeForce RTX 4090, compute capability 8.9 (sm89)"
    assert lines[1] == f"runtime: tensorrt {library}"
    assert lines[2].startswith(f"  not {rtx['file_name']}: ")
    assert "tensorrt_rtx" in lines[2]
    assert lines[3].startswith(f"selected {tensorrt['file_name']}: ")
    assert len(lines) == 4
    # Not in the cache folder: refused before TensorRT sees anything, naming the file.
    assert result.stderr.startswith("cpp_inference: ")
    assert str(cache / "tensoracle" / str(tensorrt["file_name"])) in result.stderr
