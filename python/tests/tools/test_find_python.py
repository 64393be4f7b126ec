"""tools/find_python.sh, which the Makefile uses to find CPython 3.12 and 3.13: with a PATH and a
pyenv folder made here, holding the interpreter running the tests under other names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[3]
FIND = REPOSITORY / "tools" / "find_python.sh"
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


def find(version: str, path: Path, pyenv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(FIND), version],
        capture_output=True,
        text=True,
        env={"PATH": f"{path}{os.pathsep}/usr/bin:/bin", "PYENV_ROOT": str(pyenv)},
        timeout=60,
        check=False,
    )


def pyenv_version(pyenv: Path, release: str) -> Path:
    interpreter = pyenv / "versions" / release / "bin" / f"python{VERSION}"
    interpreter.parent.mkdir(parents=True)
    interpreter.symlink_to(sys.executable)
    return interpreter


def test_the_interpreter_on_path_is_printed_as_it_names_itself(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / f"python{VERSION}").symlink_to(sys.executable)
    done = find(VERSION, tmp_path / "bin", tmp_path / "pyenv")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{tmp_path / 'bin' / f'python{VERSION}'}\n"


def test_a_shim_that_fails_is_passed_over_for_the_newest_pyenv_version(tmp_path):
    (tmp_path / "bin").mkdir()
    shim = tmp_path / "bin" / f"python{VERSION}"
    shim.write_text("#!/bin/sh\necho 'pyenv: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    pyenv_version(tmp_path / "pyenv", f"{VERSION}.9")
    newest = pyenv_version(tmp_path / "pyenv", f"{VERSION}.10")
    done = find(VERSION, tmp_path / "bin", tmp_path / "pyenv")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{newest}\n"


def test_an_interpreter_of_another_version_under_the_name_is_passed_over(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python3.99").symlink_to(sys.executable)
    done = find("3.99", tmp_path / "bin", tmp_path / "pyenv")
    assert done.returncode == 1
    assert done.stdout == ""
