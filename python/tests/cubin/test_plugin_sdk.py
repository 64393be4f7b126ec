"""The C++ plugin SDK (cpp/plugin) and its CMake helpers, without a GPU: the SDK, a test plugin and
a fixture bundle.cpp in the generated format compile with g++ and clang++ as C++17 and C++20
against the TensorRT 10.14, 11.0 and 11.1 headers; one plugin built by tensoracle_add_cubin_plugin
links against the CUDA driver stub and TensorRT's lean runtime, exports only the plugin's entry
points and depends on libcuda.so.1 but on no TensorRT library; the SDK's host-side GoogleTest
suite passes; and tensoracle_find_cuda searches its roots in the documented order."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "cpp" / "plugin"
HELPERS = PLUGIN / "cmake"
SDK_TESTS = PLUGIN / "tests" / "sdk"
SCRIPTS = Path(sysconfig.get_paths()["scripts"])
CMAKE = SCRIPTS / "cmake"
NINJA = SCRIPTS / "ninja"
SITE = Path(sysconfig.get_paths()["purelib"])
CUDA_WHEEL_ROOT = SITE / "nvidia" / "cu13"
LEAN_LIBRARY = SITE / "tensorrt_lean_libs" / "libnvinfer_lean.so.11"
# TensorRT 10.14 headers from `make tensorrt-headers`; the TensorRT 11 headers of NVIDIA's
# open-source repository, each file checked against its pinned SHA-256, from
# `make tensorrt-11-headers`.
TENSORRT_11 = REPO / "build" / "tensorrt-headers"
TENSORRT_HEADERS = {
    "10.14": REPO / "build" / "tensorrt-sdk" / "include",
    "11.0": TENSORRT_11 / "11.0.0.114" / "include",
    "11.1": TENSORRT_11 / "11.1.0.106" / "include",
}
BASE_ENV = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}


def require(path: Path, what: str) -> Path:
    # `make test` provides every one of these; a missing one is a broken setup, not a skip.
    assert path.exists(), (
        f"{what} '{path}' is missing (make tensorrt-headers tensorrt-11-headers plugin-tensorrt)"
    )
    return path


def tensorrt_root(directory: Path, headers: Path) -> Path:
    """A TENSORRT_ROOT holding only headers and the lean runtime (real TensorRT 11.4 code)."""
    (directory / "lib").mkdir(parents=True)
    (directory / "include").symlink_to(headers)
    (directory / "lib" / "libnvinfer_lean.so").symlink_to(LEAN_LIBRARY)
    return directory


# --- the compile matrix ------------------------------------------------------------------------


@pytest.mark.parametrize("headers", sorted(TENSORRT_HEADERS))
@pytest.mark.parametrize("standard", ["c++17", "c++20"])
@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_sdk_compiles(compiler: str, standard: str, headers: str):
    assert shutil.which(compiler) is not None, f"{compiler} is not installed (make apt)"
    include = require(TENSORRT_HEADERS[headers], f"TensorRT {headers} headers")
    command = [
        compiler,
        f"-std={standard}",
        "-fsyntax-only",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-Wno-deprecated-declarations",
        f"-I{PLUGIN / 'include'}",
        "-isystem",
        str(include),
        "-isystem",
        str(require(CUDA_WHEEL_ROOT / "include", "CUDA headers")),
        str(PLUGIN / "src" / "cubin_plugin.cpp"),
        str(SDK_TESTS / "bundle" / "bundle.cpp"),
        str(SDK_TESTS / "test_plugin.cpp"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


# --- one full build ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    require(LEAN_LIBRARY, "TensorRT's lean runtime (tensorrt-lean wheel)")
    headers = require(TENSORRT_HEADERS["11.1"], "TensorRT 11.1 headers")
    top = tmp_path_factory.mktemp("sdk-build")
    root = tensorrt_root(top / "tensorrt", headers)
    build = top / "build"
    configure = subprocess.run(
        [
            str(CMAKE),
            "-S",
            str(SDK_TESTS),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={NINJA}",
            f"-DTENSORRT_ROOT={root}",
            f"-DCUDAToolkit_ROOT={require(CUDA_WHEEL_ROOT, 'the CUDA wheels root')}",
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
        ],
        capture_output=True,
        text=True,
        check=False,
        env=BASE_ENV,
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    compiled = subprocess.run(
        [str(NINJA), "-C", str(build)], capture_output=True, text=True, check=False, env=BASE_ENV
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return {"build": build, "root": root, "configure": configure.stdout}


def readelf(*arguments: str) -> str:
    assert shutil.which("readelf") is not None, "readelf (binutils) is not installed (make apt)"
    return subprocess.run(
        ["readelf", "-W", *arguments], capture_output=True, text=True, check=True
    ).stdout


def exported(library: Path) -> list[tuple[str, str]]:
    """(binding, name) of every symbol the library defines in .dynsym."""
    symbols = []
    for line in readelf("--dyn-syms", str(library)).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[0][:-1].isdigit() and parts[6] != "UND":
            symbols.append((parts[4], parts[7].split("@")[0]))
    return symbols


def test_the_configure_made_a_link_time_stub(built):
    build = built["build"]
    stub = build / "tensoracle-cuda-stub" / "libcuda.so"
    output = " ".join(str(built["configure"]).split())
    if "made a link-time stub" not in output:
        pytest.skip("this machine has a CUDA driver link library: no stub was needed")
    assert f"made a link-time stub {stub}" in output
    assert "The real NVIDIA driver is needed at run time" in output
    assert f"tensoracle: CUDA driver library: {stub}" in output
    assert f"tensoracle: CUDA headers: {CUDA_WHEEL_ROOT / 'include'}" in output
    assert "Library soname: [libcuda.so.1]" in readelf("-d", str(stub))
    # Only the link name: a libcuda.so.1 there would be found at run time through the RPATH.
    assert sorted(p.name for p in stub.parent.iterdir()) == ["libcuda.so"]
    names = {name for _, name in exported(stub)}
    for entry in ("cuCtxGetCurrent", "cuCtxGetId", "cuCtxPushCurrent_v2", "cuModuleLoadData"):
        assert entry in names
    assert {"cuLaunchKernel", "cuMemAlloc_v2", "cuMemcpyHtoD_v2", "cuMemFree_v2"} <= names


def test_the_plugin_exports_only_its_entry_points_and_needs_no_tensorrt_library(built):
    library = built["build"] / "libsdk_test_plugin.so"
    symbols = exported(library)
    strong = sorted(name for binding, name in symbols if binding == "GLOBAL")
    assert strong == [
        "getCreators",
        "setLoggerFinder",
        "tensoracle_bundle_sha256",
        "tensoracle_cubin_sm120_fill",
        "tensoracle_cubin_sm120_fill_size",
        "tensoracle_cubin_sm86_scale",
        "tensoracle_cubin_sm86_scale_size",
    ]
    # Besides those only libstdc++'s own weak template instances (its headers give namespace std
    # default visibility); nothing of the SDK or TensorRT's classes, and no GNU-unique symbol
    # (which would keep the library from being unloaded).
    others = [(binding, name) for binding, name in symbols if binding != "GLOBAL"]
    assert all(b == "WEAK" and n.startswith(("_ZNSt", "_ZSt", "_ZNKSt")) for b, n in others), others
    needed = readelf("-d", str(library))
    assert "Shared library: [libcuda.so.1]" in needed
    assert "libnvinfer" not in needed


def test_the_cache_holds_the_tensorrt_results_and_no_private_paths(built):
    cache = (built["build"] / "CMakeCache.txt").read_text()
    root = built["root"]
    assert f"TENSORACLE_NVINFER_LIBRARY:FILEPATH={root}/lib/libnvinfer_lean.so" in cache
    assert f"TENSORACLE_NVINFER_INCLUDE:PATH={root}/include" in cache
    assert "_tensoracle" not in cache


def test_the_host_side_suite_passes(built, tmp_path: Path):
    test = built["build"] / "sdk_test"
    assert test.exists(), "sdk_test was not built: GoogleTest (libgtest-dev) missing? (make apt)"
    stub = built["build"] / "tensoracle-cuda-stub" / "libcuda.so"
    if not stub.exists():
        pytest.skip("a real driver library was linked: the stub's results do not apply")
    # sdk_test needs libcuda.so.1 to start. On a machine without a driver, and for this test
    # program only, the stub is copied under that name into a private folder on LD_LIBRARY_PATH
    # (the plugin itself never finds a libcuda.so.1 next to the stub).
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    shutil.copyfile(stub, runtime / "libcuda.so.1")
    result = subprocess.run(
        [str(test), "--gtest_brief=1"],
        capture_output=True,
        text=True,
        check=False,
        env={**BASE_ENV, "LD_LIBRARY_PATH": str(runtime)},
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASSED" in result.stdout


def test_clang_tidy_is_clean_on_the_sdk_source(built):
    assert shutil.which("clang-tidy") is not None, "clang-tidy is not installed (make apt)"
    result = subprocess.run(
        ["clang-tidy", "-p", str(built["build"]), "--quiet", str(PLUGIN / "src/cubin_plugin.cpp")],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- configure-time behaviour of the helpers -----------------------------------------------------


def configure(
    tmp_path: Path,
    body: str,
    environment: dict[str, str] | None = None,
    languages: str = "NONE",
    definitions: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "project"
    source.mkdir(exist_ok=True)
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        f"project(probe LANGUAGES {languages})\n"
        f'include("{HELPERS}/TensoracleCubinPlugin.cmake")\n{body}\n'
    )
    build = tmp_path / "build"
    shutil.rmtree(build, ignore_errors=True)
    return subprocess.run(
        [
            str(CMAKE),
            "-S",
            str(source),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={NINJA}",
            *definitions,
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**BASE_ENV, **(environment or {})},
    )


def flat(result: subprocess.CompletedProcess[str]) -> str:
    return " ".join((result.stdout + result.stderr).split())


def fake_root(directory: Path, driver: str | None = "lib64/libcuda.so") -> Path:
    """A CUDA root with include/cuda.h, bin/nvcc and (optionally) a driver library file."""
    (directory / "include").mkdir(parents=True)
    (directory / "include" / "cuda.h").write_text("/* test */\n")
    (directory / "bin").mkdir()
    (directory / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (directory / "bin" / "nvcc").chmod(0o755)
    if driver is not None:
        (directory / driver).parent.mkdir(parents=True, exist_ok=True)
        (directory / driver).write_text("")
    return directory


FIND = (
    "tensoracle_find_cuda(OUT_INCLUDE_DIR inc OUT_DRIVER_LIBRARY drv)\n"
    'message(STATUS "chosen-root=${_tensoracle_cuda_root}")\n'
    "get_target_property(location tensoracle_cuda_driver IMPORTED_LOCATION)\n"
    "get_target_property(includes tensoracle_cuda_driver INTERFACE_INCLUDE_DIRECTORIES)\n"
    'message(STATUS "out=${inc}|${drv} target=${includes}|${location}")'
)


def chosen(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    for line in result.stdout.splitlines():
        if "chosen-root=" in line:
            return line.split("chosen-root=", 1)[1].strip()
    raise AssertionError(result.stdout)


def test_find_cuda_sets_its_outputs_the_target_and_prints_the_choice(tmp_path: Path):
    root = fake_root(tmp_path / "cuda")
    result = configure(tmp_path, FIND, definitions=(f"-DCUDAToolkit_ROOT={root}",))
    assert chosen(result) == str(root)
    out = flat(result)
    header, driver = f"{root}/include", f"{root}/lib64/libcuda.so"
    assert f"out={header}|{driver} target={header}|{driver}" in out
    assert f"tensoracle: CUDA headers: {header}" in out
    assert f"tensoracle: CUDA driver library: {driver}" in out


def test_cudatoolkit_root_variable_wins_over_the_environment_and_either_is_the_only_root(
    tmp_path: Path,
):
    variable, environment = fake_root(tmp_path / "a"), fake_root(tmp_path / "b")
    result = configure(
        tmp_path,
        FIND,
        {"CUDAToolkit_ROOT": str(environment)},
        definitions=(f"-DCUDAToolkit_ROOT={variable}",),
    )
    assert chosen(result) == str(variable)
    assert chosen(configure(tmp_path, FIND, {"CUDAToolkit_ROOT": str(environment)})) == str(
        environment
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    # Never replaced by another root, even when /usr/local/cuda or CUDA_PATH would have cuda.h.
    refused = configure(
        tmp_path, FIND, {"CUDAToolkit_ROOT": str(empty), "CUDA_PATH": str(variable)}
    )
    assert refused.returncode != 0
    assert f"{empty}/include" in flat(refused)
    assert str(variable) not in flat(refused)


def test_search_order_after_cudatoolkit_root(tmp_path: Path):
    compiler, cudacxx = fake_root(tmp_path / "compiler"), fake_root(tmp_path / "cudacxx")
    on_path, cuda_path = fake_root(tmp_path / "real"), fake_root(tmp_path / "cuda_path")
    link = tmp_path / "links" / "bin"
    link.mkdir(parents=True)
    (link / "nvcc").symlink_to(on_path / "bin" / "nvcc")
    every = {
        "CUDACXX": str(cudacxx / "bin" / "nvcc"),
        "PATH": f"{link}:/usr/bin:/bin",
        "CUDA_PATH": str(cuda_path),
    }
    with_compiler = (f"-DCMAKE_CUDA_COMPILER={compiler / 'bin' / 'nvcc'}",)
    assert chosen(configure(tmp_path, FIND, every, definitions=with_compiler)) == str(compiler)
    toolkit = (f"-DCMAKE_CUDA_COMPILER_TOOLKIT_ROOT={cuda_path}", *with_compiler)
    assert chosen(configure(tmp_path, FIND, every, definitions=toolkit)) == str(cuda_path)
    assert chosen(configure(tmp_path, FIND, every)) == str(cudacxx)
    missing_cudacxx = {**every, "CUDACXX": str(tmp_path / "absent" / "bin" / "nvcc")}
    # nvcc on PATH: the root of its real path, not of the link.
    assert chosen(configure(tmp_path, FIND, missing_cudacxx)) == str(on_path)
    del missing_cudacxx["PATH"]
    assert chosen(configure(tmp_path, FIND, missing_cudacxx)) == str(cuda_path)


def test_the_installed_driver_library_is_preferred_over_the_stubs(tmp_path: Path):
    both = fake_root(tmp_path / "both", "lib64/libcuda.so")
    (both / "lib64" / "stubs").mkdir()
    (both / "lib64" / "stubs" / "libcuda.so").write_text("")
    result = configure(tmp_path, FIND, definitions=(f"-DCUDAToolkit_ROOT={both}",))
    assert f"CUDA driver library: {both}/lib64/libcuda.so" in flat(result)
    stubs_only = fake_root(tmp_path / "stubs", "targets/x86_64-linux/lib/stubs/libcuda.so")
    result = configure(tmp_path, FIND, definitions=(f"-DCUDAToolkit_ROOT={stubs_only}",))
    if f"{stubs_only}/" not in flat(result):
        pytest.skip("this machine has an installed driver library, which is preferred")
    assert f"CUDA driver library: {stubs_only}/targets/x86_64-linux/lib/stubs/libcuda.so" in flat(
        result
    )


def test_a_missing_header_lists_the_searched_directories_and_the_pypi_fix(tmp_path: Path):
    root = tmp_path / "nothing"
    root.mkdir()
    result = configure(tmp_path, FIND, {"CUDAToolkit_ROOT": str(root)})
    assert result.returncode != 0
    message = flat(result)
    for part in (f"{root}/include", f"{root}/targets/x86_64-linux/include", "cuda.h"):
        assert part in message
    assert "nvidia/cu13" in message
    assert "CUDAToolkit_ROOT" in message
    assert "nvidia-cuda-nvcc" in message


def test_find_cuda_checks_its_arguments(tmp_path: Path):
    unknown = configure(tmp_path, "tensoracle_find_cuda(OUT_INCLUDE_DIR a OUT_DRIVER_LIBRARY b X)")
    assert "tensoracle_find_cuda: unknown arguments: X" in flat(unknown)
    missing = configure(tmp_path, "tensoracle_find_cuda(OUT_INCLUDE_DIR a)")
    assert missing.returncode != 0
    assert "OUT_INCLUDE_DIR <variable> and OUT_DRIVER_LIBRARY <variable> are both required" in (
        flat(missing)
    )


def test_the_stub_is_made_when_no_driver_library_exists(tmp_path: Path):
    root = fake_root(tmp_path / "cu13", driver=None)
    (root / "include" / "cuda.h").unlink()
    (root / "include" / "cuda.h").symlink_to(CUDA_WHEEL_ROOT / "include" / "cuda.h")
    result = configure(tmp_path, FIND, {"CUDAToolkit_ROOT": str(root)}, languages="CXX")
    if "made a link-time stub" not in flat(result):
        pytest.skip("this machine has an installed driver library, which is preferred")
    stub = tmp_path / "build" / "tensoracle-cuda-stub" / "libcuda.so"
    assert f"CUDA driver library: {stub}" in flat(result)
    assert stub.is_file()
    # Without a C++ compiler enabled there is no stub: the error says where it looked and why.
    refused = configure(tmp_path, FIND, {"CUDAToolkit_ROOT": str(root)})
    assert refused.returncode != 0
    assert f"{root}/lib64/stubs" in flat(refused)
    assert "link-time stub" in flat(refused)


def test_add_cubin_plugin_requires_its_four_keywords(tmp_path: Path):
    result = configure(tmp_path, "tensoracle_add_cubin_plugin(TARGET p SOURCES p.cpp)")
    assert result.returncode != 0
    assert "TARGET, TENSORRT_ROOT, BUNDLE_ROOT and SOURCES are required" in flat(result)


def test_add_cubin_plugin_ignores_unknown_arguments_and_coexists_with_cuda_targets(
    tmp_path: Path,
):
    root = tensorrt_root(tmp_path / "trt", require(TENSORRT_HEADERS["11.1"], "headers"))
    require(LEAN_LIBRARY, "TensorRT's lean runtime")
    body = (
        "add_library(CUDA::cuda_driver UNKNOWN IMPORTED)\n"
        f'tensoracle_add_cubin_plugin(SOMETHING_NEW TARGET p TENSORRT_ROOT "{root}" '
        f'BUNDLE_ROOT "{SDK_TESTS / "bundle"}" SOURCES "{SDK_TESTS / "test_plugin.cpp"}")\n'
        "get_target_property(libraries p LINK_LIBRARIES)\n"
        'message(STATUS "libraries=${libraries}")'
    )
    result = configure(tmp_path, body, {"CUDAToolkit_ROOT": str(CUDA_WHEEL_ROOT)}, languages="CXX")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"libraries={root}/lib/libnvinfer_lean.so;tensoracle_cuda_driver" in flat(result)


def test_add_cubin_plugin_needs_nvinfer_h_and_a_tensorrt_library(tmp_path: Path):
    empty = tmp_path / "sdk"
    (empty / "include").mkdir(parents=True)
    body = (
        f'tensoracle_add_cubin_plugin(TARGET p TENSORRT_ROOT "{empty}" '
        f'BUNDLE_ROOT "{SDK_TESTS / "bundle"}" SOURCES p.cpp)'
    )
    environment = {"CUDAToolkit_ROOT": str(fake_root(tmp_path / "cuda"))}
    result = configure(tmp_path, body, environment)
    assert result.returncode != 0
    assert "TENSORACLE_NVINFER_INCLUDE" in flat(result)
    (empty / "include" / "NvInfer.h").write_text("")
    result = configure(tmp_path, body, environment)
    assert result.returncode != 0
    assert "TENSORACLE_NVINFER_LIBRARY" in flat(result)
