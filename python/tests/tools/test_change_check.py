"""tools/change_check.py (`make check`): which checks a set of changed files selects, read from this
repository's own tree, and which files count as changed, in a git repository made here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPOSITORY / "tools"))
import change_check  # noqa: E402 (found in tools/, put on the path above)


def test_a_core_source_selects_its_parts_cpp_and_python_tests_and_lints():
    plan = change_check.plan_for(["cpp/src/cache/store.cpp"], REPOSITORY)
    assert {"store_test", "cache_listing_test", "store_race_test"} <= plan.ctest_names
    assert "compare_test" not in plan.ctest_names
    assert "lock_file_space_test" in plan.ctest_names  # posix/ tests of the part count
    assert not any("windows" in name for name in plan.ctest_names)
    assert plan.python_tests == {"tests/cache"}
    assert (plan.cpp_build, plan.install_package, plan.tidy, plan.ctest_all) == (
        True,
        True,
        True,
        False,
    )
    assert plan.clang_format_files == {"cpp/src/cache/store.cpp"}
    assert not plan.ruff_files
    assert not plan.mypy


def test_a_test_file_inside_a_selected_folder_is_not_given_twice():
    plan = change_check.plan_for(
        ["python/src/tensoracle/compare/report.py", "python/tests/compare/test_compare.py"],
        REPOSITORY,
    )
    assert "tests/compare" in plan.python_tests
    assert not any(test.startswith("tests/compare/") for test in plan.python_tests)


def test_a_public_header_selects_its_parts_tests():
    plan = change_check.plan_for(["cpp/include/tensoracle/compare/compare.hpp"], REPOSITORY)
    assert {"compare_test", "float_formats_test"} <= plan.ctest_names
    assert plan.python_tests == {"tests/compare"}


def test_a_cpp_test_selects_itself_and_no_python():
    plan = change_check.plan_for(["cpp/tests/text/utf8_text_test.cpp"], REPOSITORY)
    assert plan.ctest_names == {"utf8_text_test"}
    assert (plan.install_package, plan.python_tests, plan.ctest_all) == (False, set(), False)


def test_build_files_and_test_helpers_select_every_cpp_test():
    for path in ("cpp/CMakeLists.txt", "cpp/tests/support/test_support.hpp"):
        assert change_check.plan_for([path], REPOSITORY).ctest_all, path


def test_a_fuzz_target_selects_no_test_of_the_build():
    plan = change_check.plan_for(["cpp/fuzz/CMakeLists.txt"], REPOSITORY)
    assert not (plan.cpp_build)
    assert not (plan.ctest_all)
    assert not (plan.ctest_names)
    assert not (plan.python_tests)
    assert plan.reasons == [
        "cpp/fuzz/CMakeLists.txt: a fuzz target (`make fuzz` builds and runs them)"
    ]


def test_the_commands_sources_select_every_cpp_test_and_the_cli_tests():
    plan = change_check.plan_for(["cpp/tools/tensoracle/main.cpp"], REPOSITORY)
    assert plan.ctest_all
    assert "tests/cli" in plan.python_tests


def test_a_binding_rebuilds_the_package_and_checks_its_stub():
    plan = change_check.plan_for(["cpp/bindings/store.cpp"], REPOSITORY)
    assert plan.install_package
    assert plan.stubs
    assert "tests/test_api_conformance.py" in plan.python_tests


def test_a_package_source_selects_its_parts_tests_and_mypy():
    plan = change_check.plan_for(["python/src/tensoracle/compare/report.py"], REPOSITORY)
    assert "tests/compare" in plan.python_tests
    assert plan.ruff_files == {"python/src/tensoracle/compare/report.py"}
    assert plan.mypy
    assert plan.install_package
    assert not plan.cpp_build
    producer = change_check.plan_for(["python/src/tensoracle/producer/x.py"], REPOSITORY)
    assert "tests/cubin" in producer.python_tests


def test_a_python_test_selects_itself_alone():
    plan = change_check.plan_for(["python/tests/cli/test_cli_cache.py"], REPOSITORY)
    assert plan.python_tests == {"tests/cli/test_cli_cache.py"}
    assert not (plan.cpp_build)
    assert not (plan.install_package)
    assert not (plan.mypy)
    assert not (plan.ctest_names)


def test_a_doc_page_or_tool_selects_the_tests_that_name_it():
    plan = change_check.plan_for(["docs/compare.md"], REPOSITORY)
    assert "tests/test_docs.py" in plan.python_tests
    tool = change_check.plan_for(["tools/find_python.sh"], REPOSITORY)
    assert "tests/tools/test_find_python.py" in tool.python_tests
    assert not any(test.startswith(("tests/cache", "tests/engine")) for test in tool.python_tests)


def test_the_ctest_step_selects_the_tests_by_exact_name():
    plan = change_check.Plan(ctest_names={"store_test", "hash_test"})
    [step] = change_check.steps_of(plan, 2)
    assert step.command[-2:] == ["-R", "^(hash_test|store_test)$"]
    assert "-LE" in step.command


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_changed_files_are_those_differing_from_the_base_with_untracked_ones(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    for name in ("kept.txt", "edited.txt", "deleted.txt"):
        (tmp_path / name).write_text(name)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    (tmp_path / "edited.txt").write_text("new")
    (tmp_path / "deleted.txt").unlink()
    (tmp_path / "new.txt").write_text("new")
    assert change_check.changed_files("HEAD", tmp_path) == ["edited.txt", "new.txt"]
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "second")
    assert change_check.changed_files("HEAD", tmp_path) == []
    assert change_check.changed_files("HEAD~1", tmp_path) == ["edited.txt", "new.txt"]
