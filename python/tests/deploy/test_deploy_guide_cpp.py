"""The C++ blocks of docs/deploy.md compile, as C++17 with warnings as errors, against the installed
package's deploy headers, TensorRT 11.1's headers and pip's CUDA headers, each as the body of a
function given the names the guide leaves to the application (device buffers, a stream, a
manifest path). Running them needs a GPU and TensorRT 11: the calls they make are tested in C++
(cpp/tests/deploy) against recording stand-ins of TensorRT's interfaces."""

from __future__ import annotations

import re
import subprocess
import sysconfig
from importlib.metadata import distribution
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

REPO = Path(__file__).resolve().parents[3]
SITE = Path(sysconfig.get_paths()["purelib"])
TENSORRT_HEADERS = REPO / "build" / "tensorrt-headers" / "11.1.0.106" / "include"
CUDA_HEADERS = SITE / "nvidia" / "cu13" / "include"

PROLOGUE = """\
#include <NvInferRuntime.h>
#include <memory>
#include <string>
#include <tensoracle/deploy/tensorrt.hpp>
namespace deploy = tensoracle::deploy;
[[maybe_unused]] void block(void* x_device, void* y_device, cudaStream_t stream,
                            std::string const& manifest_path) {
    (void)x_device; (void)y_device; (void)stream; (void)manifest_path;
"""


def cpp_blocks() -> list[str]:
    return re.findall(r"```cpp\n(.*?)```", (REPO / "docs" / "deploy.md").read_text(), re.S)


def test_the_guide_shows_the_short_path_in_at_most_five_statements():
    short = cpp_blocks()[0]
    statements = [line for line in short.splitlines() if line.rstrip().endswith(";")]
    assert "open_engine(" in short
    assert "create_execution()" in short
    assert len(statements) <= 5, short


@pytest.mark.parametrize("index", range(len(cpp_blocks())))
def test_each_cpp_block_of_the_guide_compiles(tmp_path: Path, index: int):
    for path in (TENSORRT_HEADERS, CUDA_HEADERS):
        assert path.exists(), f"'{path}' is missing (make tensorrt-11-headers, make venv)"
    include = Path(str(distribution("tensoracle").locate_file("tensoracle/cpp"))) / "include"
    source = tmp_path / f"block{index}.cpp"
    source.write_text(PROLOGUE + cpp_blocks()[index] + "}\n")
    compiled = subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{include}",
            "-isystem",
            str(TENSORRT_HEADERS),
            "-isystem",
            str(CUDA_HEADERS),
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compiled.returncode == 0, source.read_text() + compiled.stderr
