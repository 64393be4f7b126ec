"""The example cubin plugin (built with the C++ plugin SDK against the TensorRT 11.1 headers) in
TensorRT 11.4's own plugin registry, from the lean runtime: through the Python bindings (in a
process of their own, registry_checks.py), through the C++ probe that reaches the IPluginV3
capability interfaces, and, on a GPU, enqueued on device buffers. Needs no tensoracle import, so
the same file runs where only the wheels are installed."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_support import (
    NAMESPACE,
    PLUGIN_TESTS,
    PLUGINS,
    REPO,
    driver_environment,
    example_library,
    lean,
    lean_library,
    loading_environment,
    probe,
)

MANIFEST = REPO / "examples" / "cubin_plugin" / "bundle" / "bundle.json"


def in_own_process(*arguments: str) -> dict:
    """The JSON object the last line of ``python ARGUMENTS`` prints, run in a process of its own
    with the environment the plugin library loads in (plugin_support.loading_environment)."""
    result = subprocess.run(
        [sys.executable, *arguments],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env=loading_environment(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def observed(tmp_path_factory) -> dict:
    """What registry_checks.py saw, run once in its own process (see plugin_support)."""
    lean()  # the lean runtime's wheels are a test dependency
    directory = tmp_path_factory.mktemp("nocreators")
    source = directory / "nocreators.c"
    source.write_text("int tensoracle_nothing(void) { return 0; }\n")
    no_creators = directory / "libnocreators.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(source), "-o", str(no_creators)], check=True)
    facts = in_own_process(
        str(Path(__file__).parents[1] / "support" / "registry_checks.py"),
        str(example_library()),
        str(no_creators),
    )
    assert facts["loaded"], "TensorRT 11.4's registry refused the example plugin library"
    return facts


def test_registry_finds_each_creator_by_name_version_and_namespace(observed):
    assert observed["added_creators"] == 3
    for name in PLUGINS:
        creator = observed["creators"][name]
        assert creator is not None, name
        assert creator["identity"] == [name, "1", NAMESPACE]
        assert creator["is_v3one"]
        assert not creator["under_no_namespace"]
        assert not creator["under_version_2"]
    assert sorted(observed["listed"]) == sorted([name, NAMESPACE] for name in PLUGINS)


def test_creators_declare_the_digest_field_then_their_own(observed):
    fields = {name: observed["creators"][name]["fields"] for name in PLUGINS}
    digest = ["bundle_sha256", "PluginFieldType.CHAR", 64]
    assert fields["TensoracleScale"] == [digest, ["alpha", "PluginFieldType.FLOAT32", 1]]
    # -1: the bias takes one value per column, any number of them.
    assert fields["TensoracleBiasAdd"] == [digest, ["bias", "PluginFieldType.FLOAT32", -1]]
    assert fields["TensoracleRowDot"] == [digest]


def test_plugins_created_from_fields_report_their_names(observed):
    scale = observed["attempts"]["scale"]
    assert scale["created"], scale["stderr"]
    assert scale["identity"] == ["TensoracleScale", "1", NAMESPACE]
    assert scale["outputs"] == 1
    assert scale["has_runtime"]
    for attempt, name in (("bias", "TensoracleBiasAdd"), ("row_dot", "TensoracleRowDot")):
        created = observed["attempts"][attempt]
        assert created["created"], created["stderr"]
        assert created["identity"] == [name, "1", NAMESPACE]


@pytest.mark.parametrize(
    ("attempt", "message"),
    [
        (
            "alpha_int32",
            "plugin 'TensoracleScale': field 'alpha' has type kINT32, expected kFLOAT32",
        ),
        ("alpha_two_values", "plugin 'TensoracleScale': field 'alpha' holds 2 values, expected 1"),
        (
            "bias_empty",
            "plugin 'TensoracleBiasAdd': field 'bias' holds 0 values, expected one or more",
        ),
        ("no_digest", "plugin 'TensoracleScale': field 'bundle_sha256' (kCHAR x 64) is missing"),
        (
            "unknown_field",
            "plugin 'TensoracleRowDot': unknown field 'alpha', expected one of: bundle_sha256",
        ),
    ],
)
def test_bad_field_is_refused_naming_plugin_field_value_and_expectation(observed, attempt, message):
    result = observed["attempts"][attempt]
    assert not result["created"]
    # No TensorRT logger was handed to the library, so the report goes to standard error.
    assert message in result["stderr"]


def test_plugin_of_another_bundle_is_refused_naming_both_digests(observed):
    result = observed["attempts"]["other_digest"]
    assert not result["created"]
    digest = observed["digest"]
    assert f"expected the digest of this library's bundle '{digest}'" in result["stderr"]
    assert len(digest) == 64
    assert digest == json.loads(MANIFEST.read_text())["bundle_sha256"]


def test_library_without_get_creators_is_refused_by_the_registry(observed):
    assert observed["no_creators_loaded"] is False


def probe_lines(*extra: str) -> list[str]:
    result = subprocess.run(
        [str(probe()), str(lean_library()), str(example_library()), *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env=loading_environment(),
    )
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.splitlines()


# What the probe must report as checked (each an "ok ..." line); any FAIL line fails the probe.
PROBE_CHECKS = [
    "the registry loads the plugin library",
    "registry finds TensoracleScale by name, version 1 and namespace (the library's own creator)",
    "format negotiation accepts FLOAT / LINEAR for input and output",
    "format negotiation declines HALF and HWC8",
    "output type FLOAT for a FLOAT input",
    "getOutputDataTypes refuses a HALF input",
    "output shape copies input 0 (declared shape_input_index)",
    "configurePlugin refuses HWC8, naming tensor, value and expectation",
    "serialized fields create an equal plugin",
    "clone keeps name and fields",
    "attachToContext gives a plugin with the same fields",
    "row dot output shape drops the last dimension",
    "row dot refuses inputs of different shapes (validate_shape)",
    "a field of the wrong type is refused",
    "a missing field is refused",
    "an unknown field is refused",
    "a field given twice is refused",
    "bias add refuses rows of another length than its bias (validate_shape)",
    "a plugin without the bundle digest is refused",
    "a plugin of another bundle is refused, naming both digests",
]
# Checked where the probe runs against the driver stub (a machine without the NVIDIA driver).
PROBE_CHECKS_WITHOUT_DRIVER = ["enqueue without a CUDA driver fails with a message, no crash"]


def test_probe_drives_the_capability_interfaces_through_the_registry():
    lean()
    lines = probe_lines()
    assert "TensorRT headers: 11.1.0.106" in lines
    assert "TensorRT runtime library version: 110400" in lines
    without_driver = bool(driver_environment())
    for check in PROBE_CHECKS + (PROBE_CHECKS_WITHOUT_DRIVER if without_driver else []):
        assert f"ok {check}" in lines, check
    # Three creators were added to the registry, which already had the runtime's built-in ones.
    before, after = next(
        (int(w[2]), int(w[5])) for w in map(str.split, lines) if w[:2] == ["registry", "creators:"]
    )
    assert after == before + 3
    assert lines[-1] == "all checks passed"


@pytest.mark.gpu
def test_every_example_kernel_runs_through_enqueue_and_matches_numpy(tmp_path: Path):
    lean()
    lines = probe_lines("--gpu", str(tmp_path))
    for variant in ("runs row_dot_div16", "runs row_dot"):
        assert any(line.startswith("ok ctx0_") and line.endswith(variant) for line in lines)
    spec = importlib.util.spec_from_file_location(
        "check_dump", PLUGIN_TESTS / "check_plugin_dump.py"
    )
    assert spec is not None
    assert spec.loader is not None
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    assert check.main(tmp_path) == 0


SEALED_LOAD = """
import fcntl, json, os, sys
import tensorrt_lean_libs  # noqa: F401
import tensorrt_lean_bindings as trt
data = open(sys.argv[1], "rb").read()
fd = os.memfd_create("tensoracle-plugin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
os.write(fd, data)
fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
            | fcntl.F_SEAL_SEAL)
registry = trt.get_plugin_registry()
before = len(registry.all_creators)
handle = registry.load_library(f"/proc/self/fd/{fd}")
print(json.dumps({"loaded": handle is not None, "added": len(registry.all_creators) - before}))
"""


def test_the_registry_loads_the_library_from_a_sealed_in_memory_copy():
    # How tensoracle::deploy hands TensorRT a plugin library it verified (plugin_library.hpp):
    # the bytes in a sealed memfd, loaded by its /proc/self/fd path. Here with TensorRT 11.4's
    # own registry (lean runtime) and the example plugin.
    lean()
    loaded = in_own_process("-c", SEALED_LOAD, str(example_library()))
    assert loaded == {"loaded": True, "added": 3}
