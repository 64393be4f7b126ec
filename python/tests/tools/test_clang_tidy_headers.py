"""The repository's .clang-tidy checks the same headers whatever the clone's folder is named: the
project's own (cpp/src, cpp/tests, cpp/tools, cpp/bindings and every tensoracle/ include folder),
never fetched or third-party ones. Run with the real clang-tidy over two copies of a small tree,
one in a folder named `tensoracle` (git's default name for a clone) and one named otherwise."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

REPOSITORY = Path(__file__).resolve().parents[3]

# A C array is a finding (modernize-avoid-c-arrays) wherever clang-tidy looks.
FINDING = "#pragma once\ninline int values[3] = {1, 2, 3};\n"

HEADERS = {
    "cpp/src/compare/blocks.hpp": True,
    "cpp/tests/support/keys.hpp": True,
    "cpp/tools/tensoracle/table.hpp": True,
    "cpp/bindings/view.hpp": True,
    "cpp/include/tensoracle/errors.hpp": True,
    "cpp/plugin/include/tensoracle/cubin_plugin.hpp": True,
    ".venv/lib/site-packages/tensoracle/cpp/include/tensoracle/deploy/manifest.hpp": True,
    "build/tensorrt-headers/11.1.0.106/include/NvInfer.h": False,
    "build/cpp/_deps/fetched/include/fetched.hpp": False,
}


def reported_headers(root: Path) -> set[str]:
    shutil.copy(REPOSITORY / ".clang-tidy", root / ".clang-tidy")
    includes = []
    for relative in HEADERS:
        header = root / relative
        header.parent.mkdir(parents=True, exist_ok=True)
        header.write_text(FINDING.replace("values", "values_" + str(len(includes))))
        includes.append(f'#include "{header}"\n')
    source = root / "cpp" / "src" / "use.cpp"
    source.write_text("".join(includes))
    done = subprocess.run(
        ["clang-tidy", "--quiet", str(source), "--", "-std=c++20"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return {
        relative
        for relative in HEADERS
        if f"{root / relative}:" in done.stdout and "modernize-avoid-c-arrays" in done.stdout
    }


@pytest.mark.parametrize("folder", ["tensoracle", "my-checkout"])
def test_the_project_headers_and_only_they_are_checked_in_a_clone_named(tmp_path, folder):
    assert shutil.which("clang-tidy") is not None, "clang-tidy is not installed (make apt)"
    root = tmp_path / folder
    root.mkdir()
    expected = {relative for relative, checked in HEADERS.items() if checked}
    assert reported_headers(root) == expected
