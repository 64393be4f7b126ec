"""The C++ package of tensoracle::deploy that the installed Python package ships in tensoracle/cpp
(python/CMakeLists.txt, cpp/cmake/TensoracleInstall.cmake): find_package(tensoracle), through
tensoracle_DIR or CMAKE_PREFIX_PATH, gives tensoracle::deploy to a C++17 application
(cpp/tests/deploy_consumer) that g++ 12 and clang++ 14 compile, link (an executable and a shared
library: the archives are position-independent) and run; only the headers the deploy headers need
are shipped, and none of them includes a third-party header, so that the package asks for no
nlohmann_json and applications that never include it, or use it with another ABI
(JSON_DIAGNOSTICS=1), link and run; the cubin plugin helpers stay beside them. Such a program
pulls a manifest's entries from the suite's S3 server and opens them, with no Python."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
from importlib.metadata import distribution
from pathlib import Path

import published_entries
import pytest
from published_entries import engine_bytes, entry_of, sign
from remote_support import Fleet, make_keys

from tensoracle import _core

pytestmark = pytest.mark.toolchain

REPO = Path(__file__).resolve().parents[3]
CONSUMER = REPO / "cpp" / "tests" / "deploy_consumer"
SCRIPTS = Path(sysconfig.get_paths()["scripts"])
CMAKE = SCRIPTS / "cmake"
NINJA = SCRIPTS / "ninja"
COMPILERS = {"g++": "g++-12", "clang++": "clang++-14"}
BASE_ENV = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}


def package_root() -> Path:
    """tensoracle/cpp of the installed distribution, located as docs/deploy.md tells users to."""
    return Path(str(distribution("tensoracle").locate_file("tensoracle/cpp")))


def compiler(name: str) -> str:
    found = shutil.which(COMPILERS[name], path=BASE_ENV["PATH"])
    # make test installs both (APT_CORE, APT_TEST): a missing one is a broken setup, not a skip.
    assert found, f"{COMPILERS[name]} is not installed"
    return found


def configure(build: Path, cxx: str, *definitions: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(CMAKE),
            "-S",
            str(CONSUMER),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={NINJA}",
            f"-DCMAKE_CXX_COMPILER={cxx}",
            *definitions,
        ],
        capture_output=True,
        text=True,
        check=False,
        env=BASE_ENV,
    )


def test_the_package_holds_the_libraries_the_config_and_the_plugin_helpers():
    root = package_root()
    for name in (
        "lib/libtensoracle_deploy.a",
        "lib/libtensoracle_core.a",
        "lib/cmake/tensoracle/tensoracleConfig.cmake",
        "lib/cmake/tensoracle/tensoracleConfigVersion.cmake",
        "lib/cmake/tensoracle/tensoracleTargets.cmake",
        "cmake/TensoracleCubinPlugin.cmake",
        "include/tensoracle/cubin_plugin.hpp",
        "src/cubin_plugin.cpp",
    ):
        assert (root / name).is_file(), f"{root / name} is missing"


def test_only_the_headers_the_deploy_headers_need_are_shipped():
    include = package_root() / "include"
    shipped = {str(path.relative_to(include)) for path in include.rglob("*.hpp")}
    # What the deploy headers include, followed to the end, from the repository's headers.
    source = REPO / "cpp" / "include"
    deploy = source / "tensoracle" / "deploy"
    pending = [str(p.relative_to(source)) for p in deploy.glob("*.hpp")]
    pending += [str(p.relative_to(source)) for p in (deploy / "tensorrt").glob("*.hpp")]
    pending += ["tensoracle/errors.hpp", "tensoracle/cuda/gpu_properties.hpp"]
    pending += ["tensoracle/compare/compare.hpp"]  # for comparing outputs (examples/cpp_inference)
    needed: set[str] = set()
    while pending:
        header = pending.pop()
        if header in needed:
            continue
        needed.add(header)
        text = (source / header).read_text()
        pending += re.findall(r'^\s*#\s*include\s*["<](tensoracle/[^">]+)[">]', text, re.M)
    # The plugin SDK's header lies in the same folder.
    assert shipped == needed | {"tensoracle/cubin_plugin.hpp"}


@pytest.mark.parametrize("found_by", ["tensoracle_DIR", "CMAKE_PREFIX_PATH"])
@pytest.mark.parametrize("cxx", sorted(COMPILERS))
def test_a_cxx17_application_builds_links_and_runs_against_the_wheel_package(
    tmp_path: Path, cxx: str, found_by: str
):
    root = package_root()
    where = (
        f"-Dtensoracle_DIR={root / 'lib' / 'cmake' / 'tensoracle'}"
        if found_by == "tensoracle_DIR"
        else f"-DCMAKE_PREFIX_PATH={root}"
    )
    build = tmp_path / "build"
    configured = configure(build, compiler(cxx), where)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = subprocess.run(
        [str(CMAKE), "--build", str(build), "--verbose"],
        capture_output=True,
        text=True,
        check=False,
        env=BASE_ENV,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "-std=c++17" in built.stdout
    assert "-std=c++20" not in built.stdout
    assert f"{root}/lib/libtensoracle_deploy.a" in built.stdout
    (tmp_path / "cache").mkdir()
    ran = subprocess.run(
        [str(build / "deploy_consumer"), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        check=False,
        env=BASE_ENV,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.rstrip().endswith("all passed")
    assert (build / "libdeploy_consumer_shared.so").is_file()


def build_consumer(
    tmp_path: Path, *definitions: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    build = tmp_path / "build"
    configured = configure(
        build, compiler("g++"), f"-DCMAKE_PREFIX_PATH={package_root()}", *definitions
    )
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = subprocess.run(
        [str(CMAKE), "--build", str(build), "--verbose"],
        capture_output=True,
        text=True,
        check=False,
        env=BASE_ENV,
    )
    return built, build


def write_manifest(path: Path) -> Path:
    """A manifest as `tensoracle build --manifest` writes it, of one entry: recipe "encoder"."""
    conditions = {
        "name": "encoder",
        "graph_version": "3",
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "gpu": None,
        "targets": ["sm86", "sm89"],
    }
    tensor = {"dtype": "HALF", "location": "DEVICE", "format": "LINEAR"}
    io = {
        "tensors": [
            {
                "name": "x",
                "mode": "INPUT",
                "shape": [-1, 3],
                **tensor,
                "profile": {"min": [1, 3], "opt": [4, 3], "max": [8, 3]},
            },
            {"name": "y", "mode": "OUTPUT", "shape": [-1, 5], **tensor},
        ]
    }
    entry = {
        "recipe": "encoder",
        "graph_version": "3",
        "file_name": _core.recorded_identity(conditions).file_name,
        "conditions": conditions,
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "targets": ["sm86", "sm89"],
        "hardware_compatibility": None,
        "io": io,
        "plan": {"size": 1024, "xxh3_128": "a" * 32},
        "engine_bytes": 1500,
        "fleet": None,
    }
    document = {"schema_version": 1, "spec": "m:RECIPES", "remote": None, "entries": [entry]}
    path.write_text(json.dumps(document))
    return path


def run_consumer(build: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "cache").mkdir()
    return subprocess.run(
        [
            str(build / "deploy_consumer"),
            str(tmp_path / "cache"),
            str(write_manifest(tmp_path / "deploy.json")),
        ],
        capture_output=True,
        text=True,
        check=False,
        env=BASE_ENV,
    )


def test_the_package_asks_for_no_nlohmann_json():
    config_dir = package_root() / "lib" / "cmake" / "tensoracle"
    for path in sorted(config_dir.glob("*.cmake")):
        code = [line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")]
        assert [line for line in code if "nlohmann" in line] == [], path


def test_an_application_that_never_includes_nlohmann_json_builds_links_and_runs(tmp_path: Path):
    # nlohmann_json cannot be found at all, and main.cpp stops with #error if any tensoracle
    # header brings nlohmann/json.hpp in.
    built, build = build_consumer(
        tmp_path, "-DDEPLOY_CONSUMER_JSON=none", "-DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON"
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "-DDEPLOY_CONSUMER_WITHOUT_JSON=1" in built.stdout
    ran = run_consumer(build, tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ok   read_manifest gives the entry's IO signature as TensorDescriptions" in ran.stdout
    assert ran.stdout.rstrip().endswith("all passed")


def test_an_application_using_nlohmann_json_with_diagnostics_builds_links_and_runs(
    tmp_path: Path,
):
    # JSON_DIAGNOSTICS=1 puts nlohmann::json in another ABI namespace than the libraries'
    # (json_abi_diag_v3_11_2): no function or member of the deploy library may have its type.
    built, build = build_consumer(tmp_path, "-DDEPLOY_CONSUMER_JSON=diagnostics")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "-DJSON_DIAGNOSTICS=1" in built.stdout
    ran = run_consumer(build, tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ok   the application's nlohmann_json (diagnostics) reads conditions_json" in ran.stdout
    assert "ok   the application's nlohmann_json (diagnostics) reads io_json" in ran.stdout
    assert ran.stdout.rstrip().endswith("all passed")


def test_the_package_files_name_no_path_of_the_machine_that_built_them():
    """Every dependency of the exported targets is an imported target or a plain library name
    that find_dependency or the linker resolves on the consumer's machine; every file of the
    package itself is named from the package's own prefix."""
    absolute = re.compile(r'(?:^|[\s;"(:<>])(/[A-Za-z][^\s;"<>)]*)')
    found = []
    for path in sorted((package_root() / "lib" / "cmake" / "tensoracle").glob("*.cmake")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            found += [f"{path.name}:{number}: {match}" for match in absolute.findall(line)]
    assert found == []


def _find_package(tmp_path: Path, requested: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / f"probe-{requested}"
    source.mkdir(exist_ok=True)
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\n"
        "project(probe LANGUAGES CXX)\n"
        f"find_package(tensoracle {requested} CONFIG REQUIRED)\n"
    )
    return subprocess.run(
        [str(CMAKE), "-S", str(source), "-B", str(source / "build"), "-G", "Ninja",
         f"-DCMAKE_MAKE_PROGRAM={NINJA}", f"-DCMAKE_CXX_COMPILER={compiler('g++')}",
         f"-DCMAKE_PREFIX_PATH={package_root()}"],
        capture_output=True, text=True, check=False, env=BASE_ENV,
    )  # fmt: skip


def test_an_application_asking_for_an_earlier_1x_finds_the_package(tmp_path: Path):
    version_file = package_root() / "lib" / "cmake" / "tensoracle" / "tensoracleConfigVersion.cmake"
    found_version = re.search(r'set\(PACKAGE_VERSION "(\d+)\.(\d+)', version_file.read_text())
    assert found_version, version_file
    major, minor = int(found_version[1]), int(found_version[2])
    for requested in ("1.0", f"{major}.{max(minor - 1, 0)}", f"{major}.{minor}"):
        found = _find_package(tmp_path, requested)
        assert found.returncode == 0, (requested, found.stderr)
    for requested in (f"{major}.{minor + 1}", f"{major + 1}.0"):
        refused = _find_package(tmp_path, requested)
        assert refused.returncode != 0, requested
        assert "compatible with requested version" in refused.stderr, refused.stderr


def test_a_cxx_program_pulls_a_manifest_from_the_s3_server_and_opens_it_without_python(
    s3_server, tmp_path: Path
):
    # Only find_package(tensoracle) and tensoracle::deploy: deploy::pull_manifest fetches the
    # signed manifest's entries (libcurl loaded at run time), DeployedEngine::open opens each;
    # the program runs with an empty PATH, no Python anywhere it could look.
    built, build = build_consumer(tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    fleet = Fleet(s3_server, tmp_path)
    signing, verify = make_keys(tmp_path, "fleet")
    key = _core.SigningKey.from_pem_file(str(signing))
    plan = bytes(range(256)) * 64
    entry = entry_of(fleet, engine_bytes("encoder", plan), key)
    manifest = published_entries.write_manifest(tmp_path / "deploy.json", fleet, [entry])
    sign(manifest, signing)
    environment = {**s3_server.environment(), "PATH": "", "HOME": str(tmp_path),
                   "TENSORACLE_REMOTE_VERIFY_KEY": str(verify)}  # fmt: skip
    cache = tmp_path / "cache"

    ran = subprocess.run(
        [str(build / "deploy_pull_consumer"), str(cache), str(manifest)],
        capture_output=True, text=True, check=False, env=environment,
    )  # fmt: skip

    assert ran.returncode == 0, ran.stdout + ran.stderr
    fingerprint = _core.VerifyKey.from_pem_file(str(verify)).fingerprint
    assert ran.stdout.splitlines() == [
        f"{entry['file_name']} {len(plan)} {fingerprint}",
        "1 pulled",
    ]
    assert (cache / entry["file_name"]).read_bytes() == fleet.read(entry["fleet"]["key"])[:-72]
