"""examples/cpp_inference, built as its README says against the installed package's tensoracle/cpp,
TensorRT 11.1's headers (`make tensorrt-11-headers`), pip's TensorRT 11.4 lean runtime, pip's CUDA
headers and CUDA runtime, with warnings as errors; then run without a GPU to its refusals, each
printed with the error's message and exit status 1 (2 for a wrong command line). Selection,
verification and the calls the example's library makes are tested in C++ (cpp/tests/deploy);
running an engine needs a GPU and TensorRT 11 engines: tools/gpu_check's machines."""

from __future__ import annotations

import os
import subprocess
import sysconfig
from importlib.metadata import distribution
from pathlib import Path

import pytest

from tensoracle import _core

pytestmark = pytest.mark.toolchain

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "cpp_inference"
SCRIPTS = Path(sysconfig.get_paths()["scripts"])
SITE = Path(sysconfig.get_paths()["purelib"])
TENSORRT_HEADERS = REPO / "build" / "tensorrt-headers" / "11.1.0.106" / "include"
LEAN_LIBRARY = SITE / "tensorrt_lean_libs" / "libnvinfer_lean.so.11"
CUDA_HEADERS = SITE / "nvidia" / "cu13" / "include"
CUDA_RUNTIME = SITE / "nvidia" / "cu13" / "lib" / "libcudart.so.13"
USAGE = (
    "usage: cpp_inference MANIFEST RECIPE INPUT_DIR OUTPUT_DIR [--expected DIR] "
    "[--shape NAME=D0xD1...]...\n"
)
BASE_ENV = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # make test provides every one of these; a missing one is a broken setup, not a skip.
    for path in (TENSORRT_HEADERS, LEAN_LIBRARY, CUDA_HEADERS, CUDA_RUNTIME):
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
            f"-DCUDART_LIBRARY={CUDA_RUNTIME}",
            "-DCMAKE_CXX_FLAGS=-Werror",
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


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (["deploy.json"], "expected MANIFEST RECIPE INPUT_DIR OUTPUT_DIR"),
        (["m", "r", "in", "out", "--shape"], "--shape needs a value"),
        (["m", "r", "in", "out", "--shape", "x"], "--shape x: write NAME=D0xD1..."),
        (["m", "r", "in", "out", "--shape", "x=1x-3"], "--shape x=1x-3: '-3' is not a dimension"),
    ],
)
def test_a_wrong_command_line_prints_the_problem_and_the_usage_and_exits_2(
    example: Path, arguments: list[str], problem: str
):
    result = run(example, *arguments)
    assert result.returncode == 2
    assert result.stderr == f"cpp_inference: {problem}\n{USAGE}"
    assert result.stdout == ""


def test_a_missing_manifest_is_refused_naming_it(example: Path, tmp_path: Path):
    manifest = tmp_path / "deploy.json"
    result = run(example, str(manifest), "encoder", str(tmp_path), str(tmp_path / "out"))
    assert result.returncode == 1
    assert result.stderr.startswith("cpp_inference: ")
    assert str(manifest) in result.stderr


def test_without_a_gpu_the_driver_s_reason_is_printed(example: Path, tmp_path: Path):
    reason = _core.gpu_absent_reason()
    if reason is None:
        pytest.skip("this machine has a GPU")
    manifest = tmp_path / "deploy.json"
    manifest.write_text('{"schema_version": 1, "spec": "m:R", "remote": null, "entries": []}')
    result = run(example, str(manifest), "encoder", str(tmp_path), str(tmp_path / "out"))
    assert result.returncode == 1
    assert result.stderr == f"cpp_inference: no GPU can be described in this thread: {reason}\n"
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()
