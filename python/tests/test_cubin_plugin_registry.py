"""The example cubin plugin (built with the C++ plugin SDK against TensorRT 10.14.1 headers) in
TensorRT 11.4's own plugin registry, from the lean runtime: through the Python bindings, through
the C++ probe that reaches the IPluginV3 capability interfaces, and, on a GPU, enqueued on device
buffers. Needs no tensoracle import, so the same file runs where only the wheels are installed."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from plugin_support import (
    NAMESPACE,
    PLUGIN_TESTS,
    PLUGINS,
    example_library,
    lean,
    lean_library,
    probe,
)


@pytest.fixture(scope="module")
def trt():
    return lean()


@pytest.fixture(scope="module")
def registry(trt):
    registry = trt.get_plugin_registry()
    handle = registry.load_library(str(example_library()))
    assert handle is not None, "TensorRT 11.4's registry refused the example plugin library"
    return registry


def scale_fields(trt, value: np.ndarray, kind=None):
    kind = kind if kind is not None else trt.PluginFieldType.FLOAT32
    return trt.PluginFieldCollection([trt.PluginField("alpha", value, kind)])


def test_registry_finds_each_creator_by_name_version_and_namespace(trt, registry):
    for name in PLUGINS:
        creator = registry.get_creator(name, "1", NAMESPACE)
        assert creator is not None, name
        assert (creator.name, creator.plugin_version, creator.plugin_namespace) == (
            name,
            "1",
            NAMESPACE,
        )
        assert isinstance(creator, trt.IPluginCreatorV3One)
        assert registry.get_creator(name, "1", "") is None
    listed = [(c.name, c.plugin_namespace) for c in registry.all_creators]
    assert all((name, NAMESPACE) in listed for name in PLUGINS)


def test_creators_declare_their_fields(trt, registry):
    scale = registry.get_creator("TensoracleScale", "1", NAMESPACE)
    assert [(f.name, f.type, f.size) for f in scale.field_names] == [
        ("alpha", trt.PluginFieldType.FLOAT32, 1)
    ]
    assert list(registry.get_creator("TensoracleRowDot", "1", NAMESPACE).field_names) == []


def test_plugin_created_from_fields_reports_its_names(trt, registry):
    creator = registry.get_creator("TensoracleScale", "1", NAMESPACE)
    fields = scale_fields(trt, np.array([2.5], dtype=np.float32))
    plugin = creator.create_plugin("scale", fields, trt.TensorRTPhase.BUILD)
    assert plugin is not None
    core = plugin.get_capability_interface(trt.PluginCapabilityType.CORE)
    assert (core.plugin_name, core.plugin_version, core.plugin_namespace) == (
        "TensoracleScale",
        "1",
        NAMESPACE,
    )
    build = plugin.get_capability_interface(trt.PluginCapabilityType.BUILD)
    assert build.num_outputs == 1
    assert plugin.get_capability_interface(trt.PluginCapabilityType.RUNTIME) is not None


@pytest.mark.parametrize(
    ("value", "kind", "message"),
    [
        (np.array([2], dtype=np.int32), "INT32", "field 'alpha' has type INT32, expected FLOAT32"),
        (np.array([1, 2], dtype=np.float32), None, "field 'alpha' holds 2 values, expected 1"),
    ],
)
def test_bad_field_is_refused_naming_plugin_field_value_and_expectation(
    trt, registry, capfd, value, kind, message
):
    creator = registry.get_creator("TensoracleScale", "1", NAMESPACE)
    kind = getattr(trt.PluginFieldType, kind) if kind else None
    plugin = creator.create_plugin("bad", scale_fields(trt, value, kind), trt.TensorRTPhase.BUILD)
    assert plugin is None
    # Without a TensorRT runtime object there is no logger to find, so the message goes to stderr.
    assert f"plugin 'TensoracleScale': {message}" in capfd.readouterr().err


def test_library_without_get_creators_is_refused_by_the_registry(trt, tmp_path: Path):
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (cc) to build a library without getCreators")
    source = tmp_path / "nocreators.c"
    source.write_text("int tensoracle_nothing(void) { return 0; }\n")
    library = tmp_path / "libnocreators.so"
    subprocess.run([compiler, "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    assert trt.get_plugin_registry().load_library(str(library)) is None


def probe_lines(*extra: str) -> list[str]:
    result = subprocess.run(
        [str(probe()), str(lean_library()), str(example_library()), *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
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
]


def test_probe_drives_the_capability_interfaces_through_the_registry(trt):
    lines = probe_lines()
    assert "TensorRT headers: 10.14.1.48" in lines
    assert "TensorRT runtime library version: 110400" in lines
    for check in PROBE_CHECKS:
        assert f"ok {check}" in lines, check
    # Three creators were added to the registry, which already had the runtime's built-in ones.
    before, after = next(
        (int(w[2]), int(w[5])) for w in map(str.split, lines) if w[:2] == ["registry", "creators:"]
    )
    assert after == before + 3
    assert lines[-1] == "all checks passed"


@pytest.mark.gpu
def test_every_example_kernel_runs_through_enqueue_and_matches_numpy(trt, tmp_path: Path):
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
