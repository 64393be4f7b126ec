"""tools/tidy_cache.py, with the real clang-tidy and clang++ over a small tree made here: a clean
file is analysed once and then skipped; any change of the file, of a header it includes, of the
configuration or of the command analyses it again; a file with findings is reported on every run;
another clone of the same files reuses the first one's results."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

REPOSITORY = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPOSITORY / "tools"))
import tidy_cache  # noqa: E402 (found in tools/, put on the path above)

CLEAN_HEADER = "#pragma once\ninline int twice(int value) { return 2 * value; }\n"
# A C array is a finding (modernize-avoid-c-arrays) in a header of cpp/src.
FINDING_HEADER = "#pragma once\ninline int values[3] = {1, 2, 3};\n"


def make_tree(root: Path) -> Path:
    """A repository with .clang-tidy, cpp/src/use.cpp including cpp/src/twice.hpp, and a build
    folder whose compile_commands.json compiles use.cpp with clang++."""
    (root / ".git").mkdir(parents=True)
    shutil.copy(REPOSITORY / ".clang-tidy", root / ".clang-tidy")
    source = root / "cpp" / "src" / "use.cpp"
    source.parent.mkdir(parents=True)
    (source.parent / "twice.hpp").write_text(CLEAN_HEADER)
    source.write_text('#include "twice.hpp"\nint use(int value) { return twice(value); }\n')
    build = root / "build"
    build.mkdir()
    write_commands(build, source, ["-std=c++20"])
    return build


def write_commands(build: Path, source: Path, flags: list[str]) -> None:
    command = {
        "directory": str(build),
        "file": str(source),
        "arguments": ["clang++", *flags, "-c", str(source), "-o", str(build / "use.o")],
        "output": str(build / "use.o"),
    }
    (build / "compile_commands.json").write_text(json.dumps([command]))


def run(build: Path, cache: Path, capsys, *extra: str) -> tuple[int, str]:
    status = tidy_cache.main(
        [
            "--build",
            str(build),
            "--cache",
            str(cache),
            "--jobs",
            "1",
            *extra,
            str(build.parent / "cpp" / "src" / "use.cpp"),
        ]
    )
    return status, capsys.readouterr().out


@pytest.fixture
def tools_present():
    for tool in ("clang-tidy", "clang++"):
        assert shutil.which(tool) is not None, f"{tool} is not installed (make apt)"


def test_a_clean_file_is_analysed_once_then_skipped_until_it_or_a_header_changes(
    tmp_path, capsys, tools_present
):
    build = make_tree(tmp_path / "repo")
    cache = tmp_path / "cache"
    status, out = run(build, cache, capsys)
    assert status == 0
    assert out.splitlines()[0] == (
        "clang-tidy: 1 files, 0 unchanged since a clean analysis, 1 analysed, 0 with findings"
    )
    assert out.splitlines()[1].startswith("  slowest: use.cpp ")
    assert len(list(cache.iterdir())) == 1
    status, out = run(build, cache, capsys)
    assert (status, "1 unchanged" in out) == (0, True)

    header = build.parent / "cpp" / "src" / "twice.hpp"
    header.write_text(CLEAN_HEADER + "// changed\n")
    status, out = run(build, cache, capsys)
    assert (status, "1 analysed" in out) == (0, True)

    (build.parent / ".clang-tidy").write_text((REPOSITORY / ".clang-tidy").read_text() + "\n")
    status, out = run(build, cache, capsys)
    assert (status, "1 analysed" in out) == (0, True)

    write_commands(build, build.parent / "cpp" / "src" / "use.cpp", ["-std=c++20", "-DX=1"])
    status, out = run(build, cache, capsys)
    assert (status, "1 analysed" in out) == (0, True)

    status, out = run(build, cache, capsys, "--extra-arg=-DY=1")
    assert (status, "1 analysed" in out) == (0, True)


def test_findings_fail_the_run_and_are_never_remembered(tmp_path, capsys, tools_present):
    build = make_tree(tmp_path / "repo")
    cache = tmp_path / "cache"
    (build.parent / "cpp" / "src" / "twice.hpp").write_text(FINDING_HEADER)
    for _ in range(2):
        status, out = run(build, cache, capsys)
        assert status == 1
        assert "modernize-avoid-c-arrays" in out
        assert "1 analysed, 1 with findings" in out
    assert not cache.exists() or not list(cache.iterdir())


def test_another_clone_of_the_same_files_reuses_the_results(tmp_path, capsys, tools_present):
    cache = tmp_path / "cache"
    first = make_tree(tmp_path / "tensoracle")
    assert run(first, cache, capsys)[0] == 0
    second = make_tree(tmp_path / "elsewhere" / "my-checkout")
    status, out = run(second, cache, capsys)
    assert (status, "1 unchanged" in out) == (0, True)


def test_a_file_outside_the_compile_database_is_a_usage_error(tmp_path, capsys, tools_present):
    build = make_tree(tmp_path / "repo")
    stray = tmp_path / "stray.cpp"
    stray.write_text("int x;\n")
    status = tidy_cache.main(["--build", str(build), "--cache", str(tmp_path / "c"), str(stray)])
    assert status == 2
    assert "stray.cpp is not in" in capsys.readouterr().err


def test_the_ninja_dependency_log_is_read_for_valid_entries_only(tmp_path, monkeypatch):
    build = tmp_path / "build"
    build.mkdir()
    (build / ".ninja_deps").write_bytes(b"")
    listing = (
        "a.o: #deps 2, deps mtime 5 (VALID)\n    ../src/a.cpp\n    /usr/include/x.h\n\n"
        "b.o: #deps 1, deps mtime 5 (STALE)\n    ../src/b.cpp\n\n"
    )

    class Done:
        returncode = 0
        stdout = listing

    monkeypatch.setattr(tidy_cache.subprocess, "run", lambda *a, **k: Done())
    found = tidy_cache.ninja_dependencies(build, [str(build / "a.o"), "b.o"], "ninja")
    assert found == {
        str(build / "a.o"): [(tmp_path / "src" / "a.cpp").resolve(), Path("/usr/include/x.h")]
    }


def test_depfiles_are_read_with_continuations_and_escaped_spaces():
    text = "use.o: /a/use.cpp \\\n /a/my\\ dir/twice.hpp\\\n /usr/include/x.h\n"
    assert tidy_cache.parse_depfile(text) == [
        "/a/use.cpp",
        "/a/my dir/twice.hpp",
        "/usr/include/x.h",
    ]
