"""tools/gpu-check without a GPU: usage errors, the no-GPU report, time limits, JUnit reading,
discovery of GPU tests and benchmarks, the layered environment, and a whole run of its steps."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import gpu_absent_reason

REPOSITORY = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPOSITORY / "tools"))

from gpu_check import check, cli, discovery, environment  # noqa: E402
from gpu_check.junit import read_cases  # noqa: E402
from gpu_check.machine import Machine, describe  # noqa: E402
from gpu_check.report import Software, render  # noqa: E402
from gpu_check.steps import FAIL, PASS, SKIP, StepResult, command_step, run_command  # noqa: E402

CTEST = (
    str(Path(sys.executable).with_name("ctest"))
    if Path(sys.executable).with_name("ctest").is_file()
    else "ctest"
)
CPP_BUILD = Path(os.environ.get("TENSORACLE_TEST_CPP_BUILD", REPOSITORY / "build" / "cpp"))


def gpu_check(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPOSITORY / "tools" / "gpu_check"), *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--wheelhouse", "no-such-dir"], "--wheelhouse 'no-such-dir': no such directory"),
        (["--wheelhouse", "."], "--wheelhouse '.': holds no tensoracle-*.whl wheel"),
        (["--cpp-build", "."], "--cpp-build '.': not a configured CMake build"),
        (["--cubin-bundle", "."], "--cubin-bundle '.': no bundle.json there"),
        (["--only", "pytest,gpus"], "--only 'pytest,gpus': choose from pytest, docs, cpp, bench"),
        (["--timeout", "0"], "argument --timeout: must be above 0, got '0'"),
        (["--timeout", "soon"], "argument --timeout: not a number: 'soon'"),
    ],
)
def test_a_bad_argument_is_named_with_its_value_and_exits_2(
    tmp_path, monkeypatch, capsys, arguments, message
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        raise SystemExit(cli.main([*arguments, "--report", "r.md"]))
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()


def test_wheelhouse_and_current_env_exclude_each_other(tmp_path):
    (tmp_path / "tensoracle-0.1.0-cp312-cp312-manylinux_2_36_x86_64.whl").write_bytes(b"")
    done = gpu_check("--wheelhouse", str(tmp_path), "--use-current-env", cwd=tmp_path)
    assert done.returncode == 2
    assert "--wheelhouse and --use-current-env exclude each other" in done.stderr


@pytest.mark.skipif(gpu_absent_reason() is None, reason="this machine has a GPU")
def test_without_a_gpu_the_report_says_why_and_nothing_runs(tmp_path):
    done = gpu_check("--report", "out/report.md", "--work-dir", "work", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.startswith("# tensoracle GPU check: no usable GPU\n")
    assert "| GPU | none usable: " in report
    assert "| pytest, docs, cpp, bench | skip |" in report
    assert "**0 steps passed, 0 failed, 1 skipped.**" in report
    assert not (tmp_path / "work").exists()


def test_a_missing_driver_library_is_the_reason_given():
    machine = describe(cuda_library="libcuda-not-here.so.1")
    assert machine.gpus == []
    assert machine.gpu_absent is not None
    assert machine.gpu_absent.startswith("no CUDA driver library (libcuda-not-here.so.1: ")
    assert machine.os_name
    assert machine.python.startswith("CPython ")


def test_a_step_over_its_limit_is_stopped_with_its_children(tmp_path):
    marker = tmp_path / "child-alive"
    script = f"sleep 30 && touch {marker} & sleep 30"
    started = time.monotonic()
    step = command_step("slow", ["sh", "-c", script], timeout=1, log=tmp_path / "slow.log")
    assert time.monotonic() - started < 15
    assert step.status == FAIL
    assert step.reason == "stopped after its limit of 1 s"
    assert "(stopped after the step's limit of 1 s)" in (tmp_path / "slow.log").read_text()
    time.sleep(0.5)
    assert not marker.exists()


def test_a_command_that_cannot_start_is_recorded_not_raised(tmp_path):
    done = run_command(["/no/such/program"], timeout=5, log=tmp_path / "x.log")
    assert done.returncode == 127
    assert "cannot start /no/such/program" in done.output
    failing = command_step("false", ["sh", "-c", "echo why; exit 4"], timeout=5, log=tmp_path / "f")
    assert (failing.status, failing.reason) == (FAIL, "exit code 4")
    assert failing.output_tail.endswith("why")


def test_pytest_results_are_read_with_reasons_and_rendered(tmp_path):
    (tmp_path / "test_sample.py").write_text(
        textwrap.dedent(
            """
            import pytest

            def test_passes():
                pass

            def test_fails():
                assert 1 == 2, "one is not two"

            def test_skips():
                pytest.skip("needs a device")
            """
        )
    )
    (tmp_path / "test_module_skipped.py").write_text(
        'import pytest\npytest.skip("needs a backend: none here", allow_module_level=True)\n'
    )
    junit = tmp_path / "results.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
         "test_sample.py", "test_module_skipped.py"],
        cwd=tmp_path, capture_output=True, check=False,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )  # fmt: skip
    cases = {case.name.rsplit("::", 1)[-1]: case for case in read_cases(junit)}
    assert cases["test_passes"].status == PASS
    assert cases["test_fails"].status == FAIL
    assert "one is not two" in cases["test_fails"].reason
    assert (cases["test_skips"].status, cases["test_skips"].reason) == (SKIP, "needs a device")
    skipped_module = cases["test_module_skipped"]
    assert (skipped_module.status, skipped_module.reason) == (SKIP, "needs a backend: none here")

    step = StepResult(
        "pytest -m gpu", FAIL, "1 failed", "pytest ...", 1.5, "", list(cases.values())
    )
    machine = Machine(driver_version="580.1", cuda_driver_api="13.0", os_name="Linux")
    software = Software(python="CPython 3.12", backend="tensorrt 11.0", packages={"numpy": "2.4"})
    report = render(machine, software, [step], generated="today", source="commit abc")
    assert "| pytest -m gpu | fail (1 passed, 1 failed, 2 skipped) | 1.5 s | 1 failed |" in report
    assert "one is not two" in report
    assert "- 1 x needs a device" in report
    assert "- 1 x needs a backend: none here" in report
    assert "| TensorRT backend | tensorrt 11.0 |" in report
    assert "| numpy | 2.4 |" in report

    step.command = "/home/someone/src/tensoracle/python/x /scratch/gc/venv/bin/python"
    labels = {"/home/someone/src/tensoracle": "<checkout>", "/scratch/gc": "<work-dir>"}
    report = render(machine, software, [step], generated="t", source="s", labels=labels)
    assert "`<checkout>/python/x <work-dir>/venv/bin/python`" in report
    assert "/home/someone" not in report


def test_a_file_that_is_not_junit_is_named(tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text("<testsuite")
    with pytest.raises(ValueError, match=r"broken\.xml is not readable JUnit XML"):
        read_cases(broken)


@pytest.mark.skipif(not CPP_BUILD.is_dir(), reason="needs the C++ build of `make cpp`")
def test_ctest_gpu_tests_are_found_by_label_and_their_skips_read(tmp_path):
    names = discovery.ctest_gpu_executables(CTEST, CPP_BUILD)
    assert "gpu_properties_gpu_test" in names
    assert all(name.endswith("_gpu_test") for name in names)
    if gpu_absent_reason() is None:
        return
    junit = tmp_path / "ctest.xml"
    environ = {k: v for k, v in os.environ.items() if k != "TENSORACLE_CUBIN_BUNDLE"}
    subprocess.run(
        [CTEST, "--test-dir", str(CPP_BUILD), "-L", "gpu", "--output-junit", str(junit)],
        capture_output=True, check=False, env=environ,
    )  # fmt: skip
    cases = {case.name: case for case in read_cases(junit)}
    assert set(cases) == set(names)
    assert cases["gpu_properties_gpu_test"].status == SKIP
    assert cases["cubin_runtime_gpu_test"].reason.startswith("skipped: set TENSORACLE_CUBIN_BUNDLE")


def test_gpu_benchmarks_and_doc_example_tests_are_discovered(tmp_path):
    found = {path.name for path in discovery.gpu_benchmarks(REPOSITORY / "bench")}
    assert {"enqueue.py", "open_engine_gpu.py"} <= found
    assert "compare.py" not in found
    assert "run.py" not in found
    (tmp_path / "run.py").write_text('GPU_ONLY = {"listed"}\n')
    for name in ("listed", "plain", "new_gpu"):
        (tmp_path / f"{name}.py").write_text("")
    assert [p.name for p in discovery.gpu_benchmarks(tmp_path)] == ["listed.py", "new_gpu.py"]
    docs = {path.name for path in discovery.docs_example_tests(REPOSITORY / "python" / "tests")}
    assert {"test_docs.py", "test_execution_docs_gpu.py"} <= docs


def test_the_layered_environment_sees_this_pythons_packages(tmp_path):
    step = environment.create_layered_venv(tmp_path / "venv", log=tmp_path / "v.log", timeout=120)
    assert step.status == PASS, step.output_tail
    python = environment.venv_python(tmp_path / "venv")
    probe = "import sys, pytest; print(sys.prefix)"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == tmp_path / "venv"


def test_the_wheelhouse_is_installed_by_name_with_no_index(tmp_path):
    for name in (
        "tensoracle-0.1.0-cp312-cp312-manylinux_2_36_x86_64.whl",
        "tensoracle-0.1.0-cp311-cp311-manylinux_2_36_x86_64.whl",
        "tensorrt_rtx_cu13-1.7.1.116-py3-none-any.whl",
    ):
        (tmp_path / name).write_bytes(b"")
    command = environment.install_command(Path("py"), REPOSITORY, tmp_path)
    assert command[-4:] == ["--find-links", str(tmp_path), "tensoracle", "tensorrt-rtx-cu13"]
    assert "--no-index" in command


@pytest.mark.skipif(not CPP_BUILD.is_dir(), reason="needs the C++ build of `make cpp`")
def test_a_whole_run_without_a_gpu_records_every_step(tmp_path):
    done = gpu_check(
        "--run-without-gpu", "--use-current-env", "--only", "pytest,cpp",
        "--cpp-build", str(CPP_BUILD), "--work-dir", "work", "--report", "report.md",
        cwd=tmp_path,
    )  # fmt: skip
    report = (tmp_path / "report.md").read_text()
    assert done.returncode == 0, done.stdout + done.stderr + report
    if gpu_absent_reason() is not None:
        assert "| pytest -m gpu | skip (" in report
        assert "| ctest -L gpu | skip (" in report
        assert "needs a GPU: " in report
    assert "| TensorRT backend | tensorrt" in report
    assert (tmp_path / "work" / "pytest-gpu.xml").is_file()


def test_a_missing_cpp_dependency_is_told_apart_from_a_broken_build(tmp_path):
    cmake = Path(sys.executable).with_name("cmake")
    if not cmake.is_file():
        pytest.fail("cmake is not installed beside this Python (requirements-dev.txt has it)")
    source = tmp_path / "source"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(probe NONE)\n"
        "find_package(NoSuchPackageForGpuCheck REQUIRED)\n"
    )
    step = command_step(
        "configure",
        [str(cmake), "-S", str(source), "-B", str(tmp_path / "build")],
        timeout=120,
        log=tmp_path / "configure.log",
    )
    assert step.status == FAIL
    assert "NoSuchPackageForGpuCheck" in check._missing_dependency(step.output_tail)
    assert check._missing_dependency("error: expected ';' before '}' token") == ""
