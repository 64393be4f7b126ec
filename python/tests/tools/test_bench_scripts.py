"""bench/: every benchmark script has a quick mode and bench/run.py runs exactly the scripts there.

Cheap checks only (each script's ``--help``, run.py's script list, the quick-mode option parser):
the quick run itself, ``bench/run.py --quick``, is a step of ``make test`` of its own. A new
script without ``--quick``, or one that run.py would leave out, fails here.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]
BENCH = REPOSITORY / "bench"
SCRIPTS = sorted(path.name for path in BENCH.glob("*.py") if path.name != "run.py")


def load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load("bench_run", BENCH / "run.py")


@pytest.fixture(scope="module")
def harness() -> ModuleType:
    return load("bench_harness", BENCH / "harness" / "__init__.py")


@pytest.fixture(scope="module")
def helps() -> dict[str, subprocess.CompletedProcess[str]]:
    """``--help`` of every script, started all at once (each imports numpy and tensoracle)."""
    started = {
        name: subprocess.Popen(
            [sys.executable, str(BENCH / name), "--help"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in SCRIPTS
    }
    done = {}
    for name, process in started.items():
        out, err = process.communicate(timeout=300)
        done[name] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return done


def test_the_runner_runs_exactly_the_scripts_of_bench(runner):
    assert len(SCRIPTS) >= 10
    assert [path.name for path in runner.scripts()] == SCRIPTS
    assert {f"{name}.py" for name in runner.GPU_ONLY} <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_script_offers_quick_mode(helps, name):
    result = helps[name]
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout
    assert "quick mode: small sizes and one repeat" in result.stdout


def test_the_runner_offers_quick_mode():
    result = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout


def test_an_unknown_benchmark_name_is_refused_before_any_runs():
    result = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "no_such_benchmark"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == "unknown benchmark(s): no_such_benchmark\n"
    assert "===" not in result.stdout


def sized_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, nargs="+", default=[256, 2048])
    parser.add_argument("--repeats", type=int, default=5)
    return parser


def test_quick_mode_replaces_the_defaults(harness):
    quick = {"mib": [4], "repeats": 1}
    full = harness.parse(sized_parser(), quick, [])
    assert (full.quick, full.mib, full.repeats) == (False, [256, 2048], 5)
    small = harness.parse(sized_parser(), quick, ["--quick"])
    assert (small.quick, small.mib, small.repeats) == (True, [4], 1)


def test_options_given_explicitly_win_over_quick_mode(harness):
    chosen = harness.parse(
        sized_parser(), {"mib": [4], "repeats": 1}, ["--repeats", "3", "--quick"]
    )
    assert (chosen.mib, chosen.repeats) == ([4], 3)


def test_quick_mode_naming_an_option_the_script_lacks_is_an_error(harness):
    with pytest.raises(ValueError, match=r"^quick mode sets options the parser lacks: repeat$"):
        harness.parse(sized_parser(), {"repeat": 1}, ["--quick"])


def test_the_tests_helpers_are_reachable_from_bench(harness):
    assert (harness.TEST_HELPERS / "engine_files.py").is_file()
    assert (harness.TEST_HELPERS / "s3_server.py").is_file()
    assert str(harness.TEST_HELPERS) in sys.path
