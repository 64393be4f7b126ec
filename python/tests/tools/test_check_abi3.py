"""tools/check_abi3.py on small wheels made here: a shared object compiled to import chosen C API
functions, under a chosen name, in a wheel with a chosen tag; abi3audit reads them from the file."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[3]
CHECK = REPOSITORY / "tools" / "check_abi3.py"
ABI3_WHEEL = "tensoracle-1.7.0-cp312-abi3-manylinux_2_34_x86_64.whl"


def extension(directory: Path, imports: tuple[str, ...]) -> bytes:
    """A shared object whose only dynamic imports are `imports` (left undefined, as in a module
    that Python loads), with the module's init function."""
    compiler = shutil.which("g++")
    assert compiler is not None, "g++ is not installed (make apt)"
    declarations = "".join(f'extern "C" void {name}();\n' for name in imports)
    calls = "".join(f"    {name}();\n" for name in imports)
    source = directory / "extension.cpp"
    source.write_text(f'{declarations}extern "C" void PyInit__core() {{\n{calls}}}\n')
    library = directory / "extension.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(library), str(source)],
        check=True,
        capture_output=True,
    )
    return library.read_bytes()


def wheel(directory: Path, name: str, members: dict[str, bytes]) -> Path:
    path = directory / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        archive.writestr("tensoracle-1.7.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    return path


def check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_extension_within_the_limited_api_of_its_tag_passes(tmp_path):
    # PyType_FromMetaclass joined the limited API in 3.12, PyObject_GetBuffer in 3.11.
    library = extension(tmp_path, ("PyObject_GetBuffer", "PyType_FromMetaclass"))
    done = check(wheel(tmp_path, ABI3_WHEEL, {"tensoracle/_core.abi3.so": library}))
    assert done.returncode == 0, done.stderr
    assert "_core.abi3.so: needs the limited API of 3.12" in done.stdout


def test_a_symbol_outside_the_limited_api_fails_and_is_named(tmp_path):
    library = extension(tmp_path, ("PyObject_GetBuffer", "_PyType_Lookup"))
    done = check(wheel(tmp_path, ABI3_WHEEL, {"tensoracle/_core.abi3.so": library}))
    assert done.returncode == 1
    assert "_core.abi3.so: uses C API outside the limited API: _PyType_Lookup" in done.stderr


def test_a_limited_api_function_newer_than_the_tag_fails_and_is_named(tmp_path):
    # PyList_GetItemRef joined the limited API in 3.13: a cp312 wheel cannot use it.
    library = extension(tmp_path, ("PyList_GetItemRef",))
    done = check(wheel(tmp_path, ABI3_WHEEL, {"tensoracle/_core.abi3.so": library}))
    assert done.returncode == 1
    assert "limited API newer than 3.12: PyList_GetItemRef (3.13)" in done.stderr


def test_a_version_specific_extension_name_in_an_abi3_wheel_fails(tmp_path):
    library = extension(tmp_path, ("PyObject_GetBuffer",))
    name = "tensoracle/_core.cpython-312-x86_64-linux-gnu.so"
    done = check(wheel(tmp_path, ABI3_WHEEL, {name: library}))
    assert done.returncode == 1
    assert f"{name}: not named *.abi3.so" in done.stderr


@pytest.mark.parametrize(
    ("name", "members", "message"),
    [
        (
            "tensoracle-1.7.0-cp311-cp311-manylinux_2_34_x86_64.whl",
            {"tensoracle/_core.abi3.so": b""},
            "the ABI tag is not abi3",
        ),
        (ABI3_WHEEL, {"tensoracle/__init__.py": b""}, "holds no extension"),
    ],
)
def test_a_wheel_that_is_not_abi3_or_has_no_extension_fails(tmp_path, name, members, message):
    done = check(wheel(tmp_path, name, members))
    assert done.returncode == 1
    assert f"{name}: {message}" in done.stderr
