"""plugins=: missing, unreadable and incompatible libraries raise PluginLibraryError before any
graph call or cached plan; libraries are compiled here with the system C compiler."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import (
    DECLARATION,
    IO,
    make_graph,
    raising_graph,
    skip_where_the_gpu_is_refused,
    write_weights,
)

import tensoracle
from tensoracle import PluginLibraryError, build_serialized_engine, open_engine
from tensoracle.engine import plugins

COMPILER = shutil.which("cc")
SUPPORT = Path(__file__).parents[1] / "support"
PLUGIN_SOURCE = SUPPORT / "plugin_library.cpp"


def header_conditions(path: Path) -> dict:
    data = path.read_bytes()
    (length,) = struct.unpack_from("<Q", data, 12)
    return json.loads(data[20 : 20 + length])["conditions"]


def compile_library(directory: Path, name: str, source: str) -> Path:
    if COMPILER is None:
        pytest.fail("no system C compiler (cc) to build a test library (make setup installs it)")
    code = directory / f"{name}.c"
    code.write_text(source)
    library = directory / f"lib{name}.so"
    subprocess.run([COMPILER, "-shared", "-fPIC", "-o", str(library), str(code)], check=True)
    return library


def test_missing_library_is_reported_before_the_graph(tmp_path: Path):
    missing = tmp_path / "libabsent.so"
    with pytest.raises(PluginLibraryError, match=r"libabsent\.so' is missing or unreadable"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=[missing])


def test_unreadable_library_is_reported(tmp_path: Path):
    directory = tmp_path / "libdirectory.so"
    directory.mkdir()
    with pytest.raises(PluginLibraryError, match="missing or unreadable"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=(directory,))


def test_file_that_is_no_shared_library_is_rejected(tmp_path: Path):
    text = tmp_path / "libtext.so"
    text.write_text("not an ELF file")
    with pytest.raises(PluginLibraryError, match=r"is not a shared library: .*no ELF header"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=[str(text)])


def test_a_library_without_get_creators_is_refused_before_any_of_its_code_runs(tmp_path: Path):
    marker = tmp_path / "constructor-ran"
    source = (
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void planted(void) {\n"
        f'    FILE* f = fopen("{marker}", "w"); if (f) fclose(f);\n'
        "}\n"
        "int tensoracle_test(void) { return 1; }\n"
    )
    library = compile_library(tmp_path, "planted", source)
    with pytest.raises(PluginLibraryError, match="does not export getCreators"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=[library])
    assert not marker.exists()


def test_library_without_get_creators_is_rejected(tmp_path: Path):
    library = compile_library(tmp_path, "noplugin", "int tensoracle_test(void) { return 1; }\n")
    with pytest.raises(PluginLibraryError, match="does not export getCreators"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=[library])


def test_library_the_registry_rejects_carries_the_backend_message(tmp_path: Path):
    # Exports the entry points but returns no creator: the backend's registry refuses it.
    library = compile_library(
        tmp_path,
        "emptyplugin",
        "#include <stdint.h>\n"
        "void setLoggerFinder(void* finder) { (void)finder; }\n"
        "void* getCreators(int32_t* count) { *count = 0; return 0; }\n",
    )
    with pytest.raises(PluginLibraryError, match=r"rejected plugin library") as caught:
        build_serialized_engine(raising_graph, DECLARATION, plugins=[library])
    assert tensoracle.backend().name in str(caught.value)
    assert "creator" in str(caught.value).lower()


def test_a_single_path_instead_of_a_sequence_is_a_value_error(tmp_path: Path):
    with pytest.raises(ValueError, match="sequence of paths"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=str(tmp_path / "lib.so"))


def test_open_engine_checks_plugins_before_any_cached_plan(tmp_path: Path, engine_cache: Path):
    weights = write_weights(tmp_path / "model.safetensors")
    with pytest.raises(PluginLibraryError, match="missing or unreadable"):
        open_engine(
            raising_graph,
            DECLARATION,
            name="plugged",
            graph_version="1",
            weights=[weights],
            io=IO,
            plugins=[tmp_path / "libgone.so"],
        )
    # Nothing was looked up or saved for the failed call.
    assert not engine_cache.exists() or not list(engine_cache.glob("*.engine"))


def compile_plugin(directory: Path, creator: str, version: str = "1") -> Path:
    """Builds plugin_library.cpp into directory/lib<creator>.so (replaced atomically)."""
    compiler = shutil.which("c++")
    if compiler is None:
        pytest.fail("no system C++ compiler (c++) to build a test plugin library")
    target = directory / f"lib{creator}.so"
    staging = directory / f".lib{creator}.{version}.so"
    subprocess.run(
        [
            compiler,
            "-shared",
            "-fPIC",
            "-std=c++17",
            f'-DPLUGIN_NAME="{creator}"',
            f'-DPLUGIN_VERSION="{version}"',
            "-o",
            str(staging),
            str(PLUGIN_SOURCE),
        ],
        check=True,
    )
    os.replace(staging, target)
    return target


def test_valid_library_is_registered_once_and_hashed_into_the_identity(
    tmp_path: Path, engine_cache: Path
):
    skip_where_the_gpu_is_refused()  # needs handles from open_engine
    library = compile_plugin(tmp_path, "TensoracleOnce")
    weights = write_weights(tmp_path / "model.safetensors")
    calls: list[int] = []
    first = open_engine(
        make_graph(weights, calls),
        DECLARATION,
        name="plugged",
        graph_version="1",
        weights=[weights],
        io=IO,
        plugins=[library],
    )
    # The same library again (also by another spelling of its path) is not registered twice.
    second = open_engine(
        raising_graph,
        DECLARATION,
        name="plugged",
        graph_version="1",
        weights=[weights],
        io=IO,
        plugins=[tmp_path / "." / library.name],
    )
    assert calls == [1]
    assert second.path == first.path
    registry = tensoracle.backend().module.get_plugin_registry()
    assert [c.name for c in registry.all_creators].count("TensoracleOnce") == 1
    digest = hashlib.sha256(library.read_bytes()).hexdigest()
    assert header_conditions(first.path)["plugins"] == [digest]
    plain = open_engine(
        make_graph(weights),
        DECLARATION,
        name="plugged",
        graph_version="1",
        weights=[weights],
        io=IO,
    )
    assert plain.path != first.path


def test_library_changed_after_load_is_refused(tmp_path: Path, engine_cache: Path):
    library = compile_plugin(tmp_path, "TensoracleChanged", version="1")
    build_serialized_engine(
        make_graph(write_weights(tmp_path / "w.safetensors")), DECLARATION, plugins=[library]
    )
    compile_plugin(tmp_path, "TensoracleChanged", version="2")  # new bytes at the same path
    with pytest.raises(PluginLibraryError, match="changed after it was loaded"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=[library])
    with pytest.raises(PluginLibraryError, match="changed after it was loaded"):
        open_engine(
            raising_graph,
            DECLARATION,
            name="plugged",
            graph_version="1",
            weights=[tmp_path / "w.safetensors"],
            io=IO,
            plugins=[library],
        )


def test_changed_library_selects_another_entry_in_a_new_process(tmp_path: Path, engine_cache: Path):
    skip_where_the_gpu_is_refused()  # the child process needs a handle from open_engine
    library = compile_plugin(tmp_path, "TensoracleProcess", version="1")
    weights = write_weights(tmp_path / "model.safetensors")
    child = (
        "import sys\n"
        f"sys.path.insert(0, {str(SUPPORT)!r})\n"
        "from pathlib import Path\n"
        "from engine_helpers import DECLARATION, IO, make_graph\n"
        "from tensoracle import open_engine\n"
        f"weights = Path({str(weights)!r})\n"
        "handle = open_engine(make_graph(weights), DECLARATION, name='plugged',\n"
        "    graph_version='1', weights=[weights], io=IO,\n"
        f"    plugins=[Path({str(library)!r})])\n"
        "print(handle.built, handle.path)\n"
    )

    def run() -> list[str]:
        result = subprocess.run(
            [sys.executable, "-c", child],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.split()

    built_first, path_first = run()
    compile_plugin(tmp_path, "TensoracleProcess", version="2")
    built_second, path_second = run()
    assert (built_first, built_second) == ("True", "True")
    assert path_first != path_second


def test_another_library_with_the_same_creator_is_refused(tmp_path: Path):
    first = compile_plugin(tmp_path, "TensoracleTwice")
    build_serialized_engine(
        make_graph(write_weights(tmp_path / "w.safetensors")), DECLARATION, plugins=[first]
    )
    other_directory = tmp_path / "other"
    other_directory.mkdir()
    other = compile_plugin(other_directory, "TensoracleTwice")
    # Other bytes (a trailing byte the loader ignores), so that it is another library.
    other.write_bytes(other.read_bytes() + b"\0")
    with pytest.raises(PluginLibraryError, match=r"rejected plugin library .*exists already"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=[other])


def test_the_same_library_at_another_path_is_not_loaded_again(tmp_path: Path):
    # As in tensoracle 1.x: one load per content. Loading the copy would register its creator
    # a second time, which the registry refuses (the test above).
    first = compile_plugin(tmp_path, "TensoracleCopied")
    copy = tmp_path / "copy" / first.name
    copy.parent.mkdir()
    copy.write_bytes(first.read_bytes())
    weights = write_weights(tmp_path / "w.safetensors")
    build_serialized_engine(make_graph(weights), DECLARATION, plugins=[first])
    build_serialized_engine(make_graph(weights), DECLARATION, plugins=[copy])


# The export check of the other platforms (Windows): the library is loaded with ctypes and
# getCreators looked up. Run here on real shared libraries, with sys.platform as Windows has it.


def _exporting_library(directory: Path) -> tuple[Path, Path]:
    """A library exporting getCreators whose constructor leaves a marker file when it is loaded."""
    marker = directory / "loaded"
    source = (
        "#include <stdint.h>\n"
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void loaded(void) {\n"
        f'    FILE* f = fopen("{marker}", "w"); if (f) fclose(f);\n'
        "}\n"
        "void* getCreators(int32_t* count) { *count = 3; return 0; }\n"
    )
    return compile_library(directory, "creators", source), marker


def test_on_linux_the_export_check_reads_the_file_and_loads_nothing(tmp_path: Path, monkeypatch):
    library, marker = _exporting_library(tmp_path)
    monkeypatch.setattr(sys, "platform", "linux")
    assert plugins._check_exports(library, library.read_bytes()) is None
    assert not marker.exists()


def test_elsewhere_a_library_exporting_get_creators_is_loaded_and_its_handle_kept(
    tmp_path: Path, monkeypatch
):
    library, marker = _exporting_library(tmp_path)
    monkeypatch.setattr(sys, "platform", "win32")
    kept = plugins._check_exports(library, library.read_bytes())
    assert marker.exists()  # the check loaded it
    # The handle kept is that library's: its getCreators runs.
    get_creators = kept.getCreators
    get_creators.argtypes = [ctypes.POINTER(ctypes.c_int32)]
    get_creators.restype = ctypes.c_void_p
    count = ctypes.c_int32(0)
    assert get_creators(ctypes.byref(count)) is None
    assert count.value == 3


def test_elsewhere_a_library_without_get_creators_is_refused_by_path(tmp_path: Path, monkeypatch):
    library = compile_library(tmp_path, "nocreators", "int tensoracle_test(void) { return 1; }\n")
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(PluginLibraryError) as caught:
        plugins._check_exports(library, library.read_bytes())
    assert str(caught.value) == (
        f"plugin library '{library}' does not export getCreators, so it is not a TensorRT "
        "plugin library"
    )


def test_elsewhere_a_file_that_is_no_library_is_refused_with_the_loaders_reason(
    tmp_path: Path, monkeypatch
):
    text = tmp_path / "plugin.dll"
    text.write_text("not a shared library, only text that a loader must refuse\n")
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(PluginLibraryError) as caught:
        plugins._check_exports(text, text.read_bytes())
    message = str(caught.value)
    assert message.startswith(f"plugin library '{text}' cannot be loaded as a shared library: ")
    reason = caught.value.__cause__
    assert isinstance(reason, OSError)
    assert message.endswith(str(reason))  # the loader's own words (here dlopen's)
    assert str(reason)
