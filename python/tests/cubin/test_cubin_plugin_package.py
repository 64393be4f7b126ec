"""The example cubin plugin package and the CMake helpers: the wheel `make cubin-plugin` built
from the README's command passes inspect_wheel and a one-byte change is refused (the README's
Python blocks, run as written); the helpers' configure-time errors name the variable and the
path; and a network with the plugin layer, which needs the full TensorRT 11 builder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from docs_examples import run_blocks
from plugin_support import LIBRARY_IN_WHEEL, REPO, example_library, example_wheel

import tensoracle
from tensoracle import (
    BuilderSettings,
    EngineBuild,
    EngineIO,
    InputShape,
    TensorSpec,
    open_engine,
)
from tensoracle.bundle import PluginBundleMismatchError, bundle_sha256, inspect_bundle

README = "examples/cubin_plugin/README.md"
HELPERS = REPO / "cpp" / "plugin" / "cmake"
BUNDLE = REPO / "examples" / "cubin_plugin" / "bundle"


def test_readme_inspection_blocks_pass_and_refuse_a_changed_cubin(monkeypatch, capsys):
    example_wheel()  # fails with the make target to run when the wheel was not built
    monkeypatch.chdir(REPO)
    scope = run_blocks(README)
    assert scope["digest"] == inspect_bundle(BUNDLE)
    assert scope["digest"] == json.loads((BUNDLE / "bundle.json").read_text())["bundle_sha256"]
    printed = capsys.readouterr().out
    assert f"bundle {scope['digest']}" in printed
    assert "cubins/sm90/scale.cubin" in printed  # the damaged member, named in the refusal


def test_a_library_from_another_bundle_is_refused(tmp_path: Path):
    other = tmp_path / "other"
    shutil.copytree(BUNDLE, other)
    manifest = json.loads((other / "bundle.json").read_text())
    manifest["note"] = "another build"  # unknown keys are kept, and change the digest
    manifest["bundle_sha256"] = bundle_sha256(manifest)
    (other / "bundle.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    assert inspect_bundle(other) == manifest["bundle_sha256"]
    with pytest.raises(PluginBundleMismatchError, match="tensoracle_bundle_sha256"):
        inspect_bundle(other, plugin=example_library())


def test_the_wheel_holds_the_library_and_its_bundle():
    import zipfile

    names = zipfile.ZipFile(example_wheel()).namelist()
    assert LIBRARY_IN_WHEEL in names
    assert "tensoracle_example_plugin/bundle/bundle.json" in names
    assert "tensoracle_example_plugin/bundle/cubins/sm90/row_dot_div16.cubin" in names
    assert example_wheel().name.endswith("-py3-none-linux_x86_64.whl")


def test_the_library_exports_only_the_plugin_entry_points_and_links_the_driver():
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", str(example_library())],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    symbols = [line.split() for line in listing.splitlines()]
    functions = sorted(name for _, kind, name in symbols if kind == "T")
    assert functions == ["getCreators", "setLoggerFinder"]
    data = {name for _, kind, name in symbols if kind == "R"}
    manifest = json.loads((BUNDLE / "bundle.json").read_text())
    embedded = {entry["embedded_symbol"] for entry in manifest["entries"]}
    assert data == {"tensoracle_bundle_sha256"} | embedded | {f"{s}_size" for s in embedded}
    # No unique global symbol, which would keep the library from ever being unloaded.
    assert [name for _, kind, name in symbols if kind == "u"] == []
    needed = subprocess.run(
        ["readelf", "-d", str(example_library())], capture_output=True, text=True, check=True
    ).stdout
    assert "[libcuda.so.1]" in needed  # linked to the CUDA driver, as 1.x plugins are
    assert "libnvinfer" not in needed  # calls no TensorRT function: loads into any runtime


# --- CMake helpers: argument and input errors at configure time --------------------------------


def cmake_error(tmp_path: Path, body: str, environment: dict[str, str] | None = None) -> str:
    script = tmp_path / "check.cmake"
    script.write_text(f'include("{HELPERS}/TensoracleCubinPlugin.cmake")\n{body}\n')
    cmake = Path(sysconfig.get_paths()["scripts"]) / "cmake"
    env = {"PATH": "/usr/bin:/bin", **(environment or {})}
    result = subprocess.run(
        [str(cmake), "-P", str(script)], capture_output=True, text=True, check=False, env=env
    )
    assert result.returncode != 0, result.stdout + result.stderr
    return " ".join(result.stderr.split())


def test_missing_keywords_name_all_four(tmp_path: Path):
    message = cmake_error(tmp_path, f'tensoracle_add_cubin_plugin(TARGET p BUNDLE_ROOT "{BUNDLE}")')
    assert "TARGET, TENSORRT_ROOT, BUNDLE_ROOT and SOURCES are required" in message


def test_missing_cuda_headers_name_cudatoolkit_root_and_the_searched_paths(tmp_path: Path):
    sdk = REPO / "build" / "tensorrt-sdk"
    message = cmake_error(
        tmp_path,
        f'tensoracle_add_cubin_plugin(TARGET p TENSORRT_ROOT "{sdk}" '
        f'BUNDLE_ROOT "{BUNDLE}" SOURCES p.cpp)',
        {"CUDAToolkit_ROOT": str(tmp_path / "cuda")},
    )
    assert "cuda.h was not found" in message
    assert f"{tmp_path}/cuda/include" in message
    assert "nvidia/cu13" in message
    assert "CUDAToolkit_ROOT" in message


# The TensorRT lookups (TENSORACLE_NVINFER_INCLUDE / _LIBRARY) run after the CUDA finder, whose
# IMPORTED target needs a configured project: tests/test_plugin_sdk.py checks them.


def test_find_cuda_checks_its_arguments(tmp_path: Path):
    unknown = cmake_error(
        tmp_path, "tensoracle_find_cuda(OUT_INCLUDE_DIR a OUT_DRIVER_LIBRARY b EXTRA c)"
    )
    assert "tensoracle_find_cuda: unknown arguments: EXTRA;c" in unknown
    missing = cmake_error(tmp_path, "tensoracle_find_cuda(OUT_INCLUDE_DIR a)")
    assert "OUT_DRIVER_LIBRARY <variable> are both required" in missing


def test_find_cuda_without_a_driver_library_lists_where_it_looked(tmp_path: Path):
    # In script mode no C++ compiler is enabled, so no link-time stub can be made either.
    root = tmp_path / "cu13"
    (root / "include").mkdir(parents=True)
    (root / "include" / "cuda.h").write_text("/* a header is found; no driver library is */\n")
    if Path("/usr/lib/wsl/lib/libcuda.so").exists():
        pytest.skip("WSL: the helper always finds the driver library in /usr/lib/wsl/lib")
    # CMake's own search locations are turned off: only the helper's hints are searched, so the
    # outcome does not depend on a driver library installed on this machine.
    message = cmake_error(
        tmp_path,
        "\n".join(
            f"set(CMAKE_FIND_USE_{kind} OFF)"
            for kind in ("CMAKE_PATH", "CMAKE_ENVIRONMENT_PATH", "SYSTEM_ENVIRONMENT_PATH")
        )
        + "\nset(CMAKE_FIND_USE_CMAKE_SYSTEM_PATH OFF)"
        + "\ntensoracle_find_cuda(OUT_INCLUDE_DIR a OUT_DRIVER_LIBRARY b)",
        {"CUDAToolkit_ROOT": str(root)},
    )
    assert "no CUDA driver link library was found" in message
    assert f"{root}/lib64/stubs" in message
    assert "link-time stub" in message


# --- A network with the plugin layer ----------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.backend
def test_open_engine_builds_and_runs_a_network_with_the_scale_plugin(tmp_path, engine_cache):
    if tensoracle.backend().name != "tensorrt":
        pytest.skip(
            "needs the full TensorRT 11 builder (tensorrt-cu13) for add_plugin_v3; "
            f"the backend here is {tensoracle.backend().name}, which has no plugin layer"
        )
    cp = pytest.importorskip("cupy")
    trt = tensoracle.backend().module
    library = example_library()

    def graph(network):
        x = network.add_input("x", trt.float32, (-1, 16))
        registry = trt.get_plugin_registry()
        creator = registry.get_creator("TensoracleScale", "1", "tensoracle_example")
        digest = np.frombuffer(inspect_bundle(BUNDLE).encode(), dtype=np.int8)
        fields = trt.PluginFieldCollection(
            [
                trt.PluginField("bundle_sha256", digest, trt.PluginFieldType.CHAR),
                trt.PluginField("alpha", np.array([0.5], np.float32), trt.PluginFieldType.FLOAT32),
            ]
        )
        plugin = creator.create_plugin("scale", fields, trt.TensorRTPhase.BUILD)
        out = network.add_plugin_v3([x], [], plugin).get_output(0)
        out.name = "y"
        network.mark_output(out)

    weights = tmp_path / "none.safetensors"
    from safetensors.numpy import save_file

    save_file({"unused": np.zeros(1, np.float32)}, str(weights))
    handle = open_engine(
        graph,
        EngineBuild(
            inputs={"x": InputShape.ranged((1, 16), (4, 16), (8, 16))},
            settings=BuilderSettings(workspace_limit=None, optimization_level=3),
        ),
        name="scale-plugin",
        graph_version="1",
        weights=[weights],
        io=EngineIO(
            inputs={"x": TensorSpec(trt.float32, (-1, 16))},
            outputs={"y": TensorSpec(trt.float32, (-1, 16))},
        ),
        plugins=[library],
    )
    unit = handle.create_execution()
    x = cp.arange(64, dtype=cp.float32).reshape(4, 16)
    y = cp.empty_like(x)
    unit.set_input_shapes({"x": (4, 16)})
    unit.enqueue({"x": x.data.ptr, "y": y.data.ptr}, stream=0)
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(y), 0.5 * cp.asnumpy(x))
