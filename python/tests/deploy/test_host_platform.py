"""tensoracle/deploy/host_platform.hpp names the platform a C++ application was compiled for as the
Python package's identity does (platform.machine()), on every architecture: compiled here with
clang for each target, the constants are checked by static_assert. An architecture it does not
know is "unrecognized", which no entry records, never another architecture's name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

REPOSITORY = Path(__file__).resolve().parents[3]

CHECK = """
#include "tensoracle/deploy/host_platform.hpp"
constexpr bool same(char const* a, char const* b) {
    for (; *a != 0 && *a == *b; ++a, ++b) {}
    return *a == *b;
}
static_assert(same(tensoracle::deploy::kHostOs, OS), "os");
static_assert(same(tensoracle::deploy::kHostArch, ARCH), "arch");
"""


def compiles(tmp_path: Path, os_name: str, arch: str, *target: str) -> subprocess.CompletedProcess:
    assert shutil.which("clang++") is not None, "clang++ is not installed (make apt)"
    source = tmp_path / "check.cpp"
    source.write_text(CHECK)
    return subprocess.run(
        [
            "clang++",
            *target,
            "-std=c++17",
            "-fsyntax-only",
            f"-I{REPOSITORY / 'cpp' / 'include'}",
            f'-DOS="{os_name}"',
            f'-DARCH="{arch}"',
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("target", "os_name", "arch"),
    [
        ("x86_64-linux-gnu", "linux", "x86_64"),
        ("aarch64-linux-gnu", "linux", "aarch64"),
        ("powerpc64le-linux-gnu", "linux", "ppc64le"),
        ("riscv64-linux-gnu", "linux", "riscv64"),
        ("s390x-linux-gnu", "linux", "s390x"),
        ("x86_64-w64-mingw32", "windows", "x86_64"),
        ("aarch64-pc-windows-msvc", "windows", "aarch64"),
        ("arm64-apple-macos", "darwin", "aarch64"),
        ("i686-linux-gnu", "linux", "unrecognized"),
        ("powerpc64-linux-gnu", "linux", "unrecognized"),
        ("mips64-linux-gnu", "linux", "unrecognized"),
    ],
)
def test_each_architecture_is_named_as_python_names_it(tmp_path, target, os_name, arch):
    done = compiles(tmp_path, os_name, arch, f"--target={target}")
    assert done.returncode == 0, done.stderr


def test_a_wrong_name_fails_the_check(tmp_path):
    done = compiles(tmp_path, "linux", "aarch64", "--target=x86_64-linux-gnu")
    assert done.returncode != 0
    assert "arch" in done.stderr


def test_this_host_is_named_as_the_python_identity_names_it(tmp_path):
    from tensoracle.cache import identity

    done = compiles(tmp_path, identity.operating_system(), identity.architecture())
    assert done.returncode == 0, done.stderr
