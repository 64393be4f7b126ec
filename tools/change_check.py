"""`make check`: the quick loop for daily work. Builds what changed, runs the tests of the touched
parts, and lints the touched files.

Usage: python tools/change_check.py [--base REV] [--dry-run]

The changed files are those that differ from REV (HEAD by default, so the changes not yet
committed; `--base main` checks a whole branch), untracked files included. From them the script
plans, and prints before it runs:

- the C++ build (build/cpp, incremental) when a file under cpp/ changed, then CTest for the tests
  of each touched part: a source or public header of part P (cpp/src/P/, cpp/include/tensoracle/P/)
  selects the tests in cpp/tests/P/; a changed test file selects itself; the test helpers, the
  build files and the command's sources select every C++ test;
- the package reinstalled into .venv when the core, the bindings, the plugin SDK or the Python
  sources changed, then pytest over the Python tests of each touched part (python/src/tensoracle/P
  and cpp/src/P select python/tests/P where it exists) and over every test file that names a
  changed file (a doc page, a tool, a test helper, an example);
- ruff (check and format) over the changed Python files, mypy when the package's sources
  changed, the extension's stub check when the bindings changed, clang-format over the changed
  C++ files, and clang-tidy over the C++ build's sources through tools/tidy_cache.py, which
  analyses only the files whose content or headers changed since their last clean analysis.

Every planned step runs, even after one fails; the exit status is 1 when any failed. `make test`
remains the gate: it runs everything, on every interpreter and platform.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv" / "bin"

# Parts of the C++ core whose Python tests live under another part's name.
PYTHON_TESTS_OF_CORE_PART = {
    "io": ["cache"],
    "remote": ["cache"],
    "text": [],
    "cuda": ["engine", "execution"],
    "deploy": [
        "deploy",
        "engine/test_open_deployed.py",
        "engine/test_streamed_plan.py",
    ],
}
# Python test folders of the package's parts whose tests live under another name.
PYTHON_TESTS_OF_PACKAGE_PART = {"producer": ["cubin"], "bundle": ["cubin"]}


@dataclass
class Plan:
    """What `make check` does for a set of changed files; each set lists what to run."""

    cpp_build: bool = False
    ctest_all: bool = False
    ctest_names: set[str] = field(default_factory=set)
    install_package: bool = False
    python_tests: set[str] = field(default_factory=set)
    ruff_files: set[str] = field(default_factory=set)
    mypy: bool = False
    stubs: bool = False
    clang_format_files: set[str] = field(default_factory=set)
    tidy: bool = False
    reasons: list[str] = field(default_factory=list)


def cpp_test_names(root: Path, folder: str) -> set[str]:
    """The CTest names of the GoogleTest files under cpp/tests/<folder> built on Linux."""
    base = root / "cpp" / "tests" / folder
    return {
        path.stem
        for path in base.rglob("*_test.cpp")
        if "windows" not in path.relative_to(base).parts
    }


def tests_naming(root: Path, changed: str) -> set[str]:
    """Python test files (relative to python/) that name `changed`, by path or module name."""
    stem = Path(changed).stem
    needles = {changed, Path(changed).name}
    if changed.endswith(".py"):
        needles.add(stem)
    found = set()
    for test in (root / "python" / "tests").rglob("test_*.py"):
        text = test.read_text(errors="replace")
        if any(needle in text for needle in needles):
            found.add(str(test.relative_to(root / "python")))
    return found


def python_tests_of(root: Path, names: Iterable[str]) -> set[str]:
    """Those of python/tests/<name> (folders or files) that exist, relative to python/."""
    return {
        f"tests/{name}" for name in names if (root / "python" / "tests" / name).exists()
    }


def plan_for(changed: Sequence[str], root: Path = ROOT) -> Plan:
    """The checks for `changed` (paths relative to the repository's root). Pure but for reading
    the tree's file names and test files."""
    plan = Plan()
    for path in changed:
        parts = Path(path).parts
        suffix = Path(path).suffix
        if suffix == ".py":
            plan.ruff_files.add(path)
        if suffix in (".cpp", ".hpp", ".h") and parts[0] == "cpp":
            plan.clang_format_files.add(path)
        if parts[:2] == ("cpp", "fuzz"):
            plan.reasons.append(
                f"{path}: a fuzz target (`make fuzz` builds and runs them)"
            )
        elif parts[0] == "cpp":
            plan.cpp_build = True
            plan.tidy = True
            if parts[1] in ("src", "include") and len(parts) > 3:
                part = parts[3] if parts[1] == "include" else parts[2]
                plan.ctest_names |= cpp_test_names(root, part)
                plan.install_package = True
                plan.python_tests |= python_tests_of(
                    root, PYTHON_TESTS_OF_CORE_PART.get(part, [part])
                )
                plan.reasons.append(f"{path}: the C++ and Python tests of part {part}")
            elif parts[1] == "tests" and path.endswith("_test.cpp"):
                plan.ctest_names.add(Path(path).stem)
                plan.reasons.append(f"{path}: that test")
            elif parts[1] == "bindings":
                plan.install_package = True
                plan.stubs = True
                plan.python_tests.add("tests/test_api_conformance.py")
                plan.python_tests |= tests_naming(root, Path(path).stem + ".cpp")
                plan.reasons.append(
                    f"{path}: the package rebuilt, its stub and API checked"
                )
            elif parts[1] == "plugin":
                plan.install_package = True
                plan.python_tests |= python_tests_of(root, ["cubin"])
                plan.reasons.append(f"{path}: the plugin SDK's tests")
            else:
                plan.ctest_all = True
                plan.install_package = plan.install_package or parts[1] == "tools"
                if parts[1] == "tools":
                    plan.python_tests |= python_tests_of(root, ["cli"])
                plan.reasons.append(f"{path}: every C++ test")
        elif parts[0] == "python" and len(parts) > 2 and parts[1] == "src":
            plan.install_package = True
            plan.mypy = True
            part = parts[3] if len(parts) > 4 else Path(parts[3]).stem
            plan.python_tests |= python_tests_of(
                root, PYTHON_TESTS_OF_PACKAGE_PART.get(part, [part])
            )
            plan.python_tests |= tests_naming(root, f"tensoracle.{part}")
            plan.reasons.append(f"{path}: the Python tests of part {part}")
        elif parts[0] == "python" and len(parts) > 2 and parts[1] == "tests":
            if Path(path).name.startswith("test_") and suffix == ".py":
                plan.python_tests.add(str(Path(*parts[1:])))
                plan.reasons.append(f"{path}: that test")
            else:
                plan.python_tests |= tests_naming(root, Path(path).name)
                plan.reasons.append(f"{path}: the tests that use it")
        else:
            named = tests_naming(root, path)
            plan.python_tests |= named
            if named:
                plan.reasons.append(f"{path}: the {len(named)} test files that name it")
    folders = {test for test in plan.python_tests if not test.endswith(".py")}
    plan.python_tests = {
        test
        for test in plan.python_tests
        if not any(
            test != folder and test.startswith(folder + "/") for folder in folders
        )
    }
    return plan


def changed_files(base: str, root: Path = ROOT) -> list[str]:
    """Files that differ from `base`, committed or not, and untracked files; deleted ones left
    out (there is nothing of them to lint or test)."""

    def git(*args: str) -> list[str]:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=True
        )
        return [line for line in done.stdout.splitlines() if line]

    names = set(git("diff", "--name-only", "--diff-filter=d", base))
    names |= set(git("ls-files", "--others", "--exclude-standard"))
    return sorted(name for name in names if (root / name).is_file())


@dataclass
class Step:
    name: str
    command: list[str]
    cwd: Path = ROOT


def steps_of(plan: Plan, jobs: int) -> list[Step]:
    """The commands that carry out `plan`, in the order they run."""
    steps: list[Step] = []
    if plan.cpp_build:
        steps.append(Step("C++ build", ["make", "--no-print-directory", "cpp"]))
    if plan.ctest_all or plan.ctest_names:
        selection = (
            []
            if plan.ctest_all
            else ["-R", "^(" + "|".join(sorted(plan.ctest_names)) + ")$"]
        )
        steps.append(
            Step(
                "CTest",
                [
                    str(VENV / "ctest"),
                    "--test-dir",
                    "build/cpp",
                    "--output-on-failure",
                    "-j",
                    str(jobs),
                    "-LE",
                    "gpu",
                    *selection,
                ],
            )
        )
    if plan.install_package:
        steps.append(Step("package", ["make", "--no-print-directory", "python"]))
    if plan.python_tests:
        steps.append(
            Step(
                "pytest",
                [
                    str(VENV / "python"),
                    "-m",
                    "pytest",
                    "-q",
                    *sorted(plan.python_tests),
                ],
                ROOT / "python",
            )
        )
    if plan.ruff_files:
        files = sorted(plan.ruff_files)
        steps.append(Step("ruff check", [str(VENV / "ruff"), "check", *files]))
        steps.append(
            Step("ruff format", [str(VENV / "ruff"), "format", "--check", *files])
        )
    if plan.mypy:
        steps.append(Step("mypy", [str(VENV / "mypy")], ROOT / "python"))
    if plan.stubs:
        steps.append(Step("stub", [str(VENV / "python"), "tools/check_stubs.py"]))
    if plan.clang_format_files:
        steps.append(
            Step(
                "clang-format",
                [
                    "clang-format",
                    "--dry-run",
                    "--Werror",
                    *sorted(plan.clang_format_files),
                ],
            )
        )
    if plan.tidy:
        steps.append(Step("clang-tidy", ["make", "--no-print-directory", "tidy-core"]))
    return steps


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base", default="HEAD", help="compare with this revision (HEAD)"
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan, run nothing"
    )
    args = parser.parse_args(argv)
    changed = changed_files(args.base)
    if not changed:
        print(
            f"make check: nothing differs from {args.base}; "
            "`make check CHECK_BASE=HEAD~1` checks the last commit"
        )
        return 0
    plan = plan_for(changed)
    steps = steps_of(plan, args.jobs)
    print(f"make check: {len(changed)} files differ from {args.base}")
    for reason in plan.reasons:
        print(f"  {reason}")
    for step in steps:
        print(f"  -> {step.name}: {' '.join(step.command)}")
    if args.dry_run:
        return 0
    results: list[tuple[str, bool, float]] = []
    for step in steps:
        print(f"== {step.name}", flush=True)
        started = time.monotonic()
        done = subprocess.run(step.command, cwd=step.cwd, check=False)
        results.append((step.name, done.returncode == 0, time.monotonic() - started))
    print("make check:")
    for name, passed, seconds in results:
        print(
            f"  {name:<14} {int(seconds) // 60:2d}:{int(seconds) % 60:02d}  "
            f"{'passed' if passed else 'FAILED'}"
        )
    return 0 if all(passed for _, passed, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
