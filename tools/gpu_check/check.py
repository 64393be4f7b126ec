"""One run of the check: the test environment and the steps, each recorded whatever happens."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gpu_check import discovery, environment
from gpu_check.junit import read_cases
from gpu_check.machine import Machine
from gpu_check.report import Software
from gpu_check.steps import FAIL, PASS, SKIP, StepResult, command_step, tail

REPOSITORY = Path(__file__).resolve().parents[2]


def _step_from_cases(step: StepResult, junit: Path, returncode_ok: bool) -> StepResult:
    """Gives a test-running step its cases and a status that follows them."""
    if not junit.is_file():
        if step.status == PASS:
            step.status, step.reason = FAIL, "wrote no test results"
        return step
    step.cases = read_cases(junit)
    counts = step.counts()
    if counts[FAIL] or not returncode_ok:
        step.status = FAIL
        step.reason = step.reason or f"{counts[FAIL]} failed"
    elif counts[PASS]:
        step.status, step.reason = PASS, ""
    elif counts[SKIP]:
        reasons = sorted({case.reason for case in step.cases})
        step.status, step.reason = SKIP, f"every test skipped ({reasons[0]})"
    else:
        step.status, step.reason = SKIP, "no test selected"
    return step


class Check:
    """One run of the check: its options, the environment's Python and the steps so far."""

    def __init__(
        self, args: argparse.Namespace, parts: list[str], machine: Machine
    ) -> None:
        self.args = args
        self.parts = parts
        self.machine = machine
        self.work = args.work_dir.resolve()
        self.logs = self.work / "logs"
        self.steps: list[StepResult] = []
        self.python = Path(sys.executable)
        self.env = dict(os.environ)
        self.env["PYTHONUNBUFFERED"] = "1"
        self.env["XDG_CACHE_HOME"] = str(self.work / "xdg-cache")

    def prepare_environment(self) -> bool:
        if self.args.use_current_env:
            return True
        venv = self.work / "venv"
        step = environment.create_layered_venv(
            venv, log=self.logs / "venv.log", timeout=self.args.timeout
        )
        self.steps.append(step)
        if step.status != PASS:
            return False
        self.python = environment.venv_python(venv)
        self.env["PATH"] = f"{self.python.parent}{os.pathsep}{self.env.get('PATH', '')}"
        self.env["VIRTUAL_ENV"] = str(venv)
        wheelhouse = self.args.wheelhouse.resolve() if self.args.wheelhouse else None
        command = environment.install_command(self.python, REPOSITORY, wheelhouse)
        title = (
            "install from the wheelhouse"
            if wheelhouse
            else "install from this checkout"
        )
        install = command_step(
            title,
            command,
            timeout=self.args.timeout,
            log=self.logs / "install.log",
            env=self.env,
        )
        self.steps.append(install)
        return install.status == PASS

    def _has_module(self, module: str) -> bool:
        found = subprocess.run(
            [str(self.python), "-c", f"import {module}"],
            capture_output=True,
            check=False,
        )
        return found.returncode == 0

    def pytest_step(self, title: str, name: str, selection: list[str]) -> StepResult:
        junit = self.work / f"{name}.xml"
        junit.unlink(missing_ok=True)
        command = [
            str(self.python), "-m", "pytest", *selection, "-p", "no:cacheprovider", "-rA",
            "--continue-on-collection-errors", f"--junitxml={junit}",
        ]  # fmt: skip
        if self._has_module("pytest_timeout"):
            command.append(f"--timeout={self.args.test_timeout:g}")
        step = command_step(
            title,
            command,
            timeout=self.args.timeout,
            log=self.logs / f"{name}.log",
            cwd=REPOSITORY / "python",
            env=self.env,
        )
        done = step.reason in ("", "exit code 1", "exit code 5")
        return _step_from_cases(step, junit, returncode_ok=done)

    def python_tests(self) -> None:
        # A GPU machine often has no producer extra (Triton, the CUDA tool wheels): the producer's
        # tests then skip with that reason instead of failing, as python/tests/conftest.py allows.
        if not self._has_module("triton"):
            self.env["TENSORACLE_TESTS_WITHOUT_PRODUCER"] = "1"
        docs = discovery.docs_example_tests(REPOSITORY / "python" / "tests")
        relative = [str(path.relative_to(REPOSITORY / "python")) for path in docs]
        if "pytest" in self.parts:
            ignores = [f"--ignore={path}" for path in relative]
            self.steps.append(
                self.pytest_step(
                    "pytest -m gpu", "pytest-gpu", ["tests", "-m", "gpu", *ignores]
                )
            )
        if "docs" in self.parts and relative:
            self.steps.append(
                self.pytest_step(
                    "documentation examples (README and guides)", "docs", relative
                )
            )

    def _cubin_bundle(self) -> str | None:
        if self.args.cubin_bundle is not None:
            return str(self.args.cubin_bundle.resolve())
        if os.environ.get("TENSORACLE_CUBIN_BUNDLE"):
            return os.environ["TENSORACLE_CUBIN_BUNDLE"]
        bundle = self.work / "cubin-bundle"
        step = command_step(
            "example cubin bundle (examples/cubin_kernels/build.py)",
            [
                str(self.python),
                "examples/cubin_kernels/build.py",
                str(bundle),
                "--overwrite",
            ],
            timeout=self.args.timeout,
            log=self.logs / "cubin-bundle.log",
            cwd=REPOSITORY,
            env=self.env,
        )
        if step.status != PASS:
            step.status = SKIP
            last = tail(step.output_tail, 1)
            step.reason = f"not built (the producer needs tensoracle[producer]): {last}"
        self.steps.append(step)
        return str(bundle) if step.status == PASS else None

    def _built_cpp(self) -> Path | None:
        if self.args.cpp_build is not None:
            return self.args.cpp_build.resolve()
        cmake = self._tool("cmake")
        if cmake is None:
            self.steps.append(
                StepResult(
                    "C++ GPU tests: build",
                    SKIP,
                    "cmake is not on PATH; install CMake 3.20+, or pass --cpp-build DIR",
                )
            )
            return None
        build = self.work / "cpp"
        configure = [cmake, "-S", str(REPOSITORY / "cpp"), "-B", str(build)]
        configure += ["-DCMAKE_BUILD_TYPE=Release", "-DTENSORACLE_BUILD_TESTS=ON"]
        ninja = self._tool("ninja")
        if ninja is not None:
            configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
        step = command_step(
            "C++ GPU tests: configure",
            configure,
            timeout=self.args.timeout,
            log=self.logs / "cpp-configure.log",
            env=self.env,
        )
        if step.status != PASS:
            missing = _missing_dependency(step.output_tail)
            if (
                missing
            ):  # a machine without the build's packages, not a fault of the tests
                step.status = SKIP
                step.reason = (
                    f"a build dependency is missing here ({missing}); install the "
                )
                step.reason += "packages `make setup` installs, or pass --cpp-build DIR"
            self.steps.append(step)
            return None
        try:
            targets = discovery.ctest_gpu_executables(self._ctest(), build)
        except (RuntimeError, OSError, ValueError) as error:
            self.steps.append(StepResult("C++ GPU tests: build", FAIL, str(error)))
            return None
        command = [cmake, "--build", str(build), "--target", *targets, "tensoracle_cli"]
        command += ["-j", str(os.cpu_count() or 2)]
        step = command_step(
            "C++ GPU tests: build",
            command,
            timeout=self.args.timeout,
            log=self.logs / "cpp-build.log",
            env=self.env,
        )
        self.steps.append(step)
        return build if step.status == PASS else None

    def _tool(self, name: str) -> str | None:
        """A build tool: the one beside the tests' Python (PyPI's cmake, ninja), else on PATH."""
        beside = self.python.parent / name
        if beside.is_file():
            return str(beside)
        return shutil.which(name, path=self.env.get("PATH"))

    def _ctest(self) -> str:
        return self._tool("ctest") or "ctest"

    def cpp_tests(self) -> None:
        if "cpp" not in self.parts:
            return
        build = self._built_cpp()
        if build is None:
            return
        env = dict(self.env)
        bundle = self._cubin_bundle()
        if bundle is not None:
            env["TENSORACLE_CUBIN_BUNDLE"] = bundle
        junit = self.work / "ctest-gpu.xml"
        junit.unlink(missing_ok=True)
        command = [
            self._ctest(),
            "--test-dir",
        ]
        command += [
            str(build),
            "-L",
            "gpu",
            "--output-on-failure",
            "--output-junit",
            str(junit),
        ]
        command += ["--timeout", f"{self.args.test_timeout:g}"]
        step = command_step(
            "ctest -L gpu",
            command,
            timeout=self.args.timeout,
            log=self.logs / "ctest-gpu.log",
            env=env,
        )
        self.steps.append(
            _step_from_cases(step, junit, returncode_ok=step.status == PASS)
        )

    def benchmarks(self, software: Software) -> None:
        if "bench" not in self.parts:
            return
        for script in discovery.gpu_benchmarks(REPOSITORY / "bench"):
            title = f"benchmark bench/{script.name}"
            if self.machine.gpu_absent is not None:
                self.steps.append(
                    StepResult(title, SKIP, f"no usable GPU: {self.machine.gpu_absent}")
                )
                continue
            if software.backend.startswith(("none", "not determined")):
                self.steps.append(
                    StepResult(title, SKIP, f"no TensorRT backend: {software.backend}")
                )
                continue
            step = command_step(
                title,
                [str(self.python), str(script)],
                timeout=self.args.timeout,
                log=self.logs / f"bench-{script.stem}.log",
                cwd=REPOSITORY,
                env=self.env,
            )
            step.show_output = True  # the benchmark's figures and ratio
            self.steps.append(step)


def _missing_dependency(output: str) -> str:
    """CMake's line naming a package or file it could not find, or '' for other failures."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if "Could NOT find" in line or "Could not find" in line:
            paragraph: list[str] = []
            for following in lines[index : index + 3]:  # CMake wraps its sentence
                if not following.strip():
                    break
                paragraph.append(following.strip())
            return " ".join(paragraph)
        if "No CMAKE_CXX_COMPILER could be found" in line:
            return "no C++ compiler"
    return ""
