"""plugins=: missing, unreadable and incompatible libraries raise PluginLibraryError before any
graph call or cached plan; libraries are compiled here with the system C compiler."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from engine_helpers import DECLARATION, IO, cache_home, raising_graph, write_weights  # noqa: F401

import tensoracle
from tensoracle import PluginLibraryError, build_serialized_engine, open_engine

COMPILER = shutil.which("cc")


def compile_library(directory: Path, name: str, source: str) -> Path:
    if COMPILER is None:
        pytest.skip("no system C compiler (cc) to build a test library")
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
    with pytest.raises(PluginLibraryError, match="cannot be loaded as a shared library"):
        build_serialized_engine(raising_graph, DECLARATION, plugins=[str(text)])


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


def test_open_engine_checks_plugins_before_any_cached_plan(tmp_path: Path, cache_home: Path):
    weights = write_weights(tmp_path / "model.safetensors")
    with pytest.raises(PluginLibraryError, match="missing or unreadable"):
        open_engine(raising_graph, DECLARATION, name="plugged", graph_version="1",
                    weights=[weights], io=IO, plugins=[tmp_path / "libgone.so"])
    # Nothing was looked up or saved for the failed call.
    assert not cache_home.exists() or not list(cache_home.glob("*.engine"))


def test_changed_after_load_is_detected():
    pytest.skip(
        "needs a plugin library that the backend's registry accepts, i.e. one with a real "
        "plugin creator, which cannot be compiled here: no TensorRT headers are installed "
        "(the pip wheels ship none). PluginLibraryError for a changed library is raised by "
        "tensoracle.plugins.load_plugins after re-hashing; see docs/engines.md"
    )
