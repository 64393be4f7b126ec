"""What TensorRT 11.4's plugin registry (lean runtime, Python bindings) makes of the example cubin
plugin, observed in a process of its own and printed as one JSON object.

Usage: ``python registry_checks.py PLUGIN_LIBRARY NO_CREATORS_LIBRARY``. The plugin library
depends on libcuda.so.1; test_cubin_plugin_registry.py runs this script with the environment
from plugin_support.loading_environment(), so that it loads on machines without a driver too.
Each creation attempt records whether TensorRT got a plugin and what the library wrote to
standard error (where its reports go when no TensorRT logger was handed to it).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorrt_lean_libs  # noqa: F401  (loads libnvinfer_lean.so.11 first)

# isort: split
import tensorrt_lean_bindings as trt

NAMESPACE = "tensoracle_example"
PLUGINS = ("TensoracleBiasAdd", "TensoracleScale", "TensoracleRowDot")


def stderr_of(call: Callable[[], Any]) -> tuple[Any, str]:
    """Runs `call` with file descriptor 2 sent to a file; returns its result and that text."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            result = call()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        return result, capture.read().decode("utf-8", "replace")


def main(plugin_library: str, no_creators: str) -> dict[str, Any]:
    registry = trt.get_plugin_registry()
    before = len(registry.all_creators)
    handle = registry.load_library(plugin_library)
    observed: dict[str, Any] = {"loaded": handle is not None}
    if handle is None:
        return observed
    observed["added_creators"] = len(registry.all_creators) - before
    # 64 hex digits and a NUL: an array inside the library, not a pointer to one.
    digest = (ctypes.c_char * 65).in_dll(ctypes.CDLL(plugin_library), "tensoracle_bundle_sha256")
    observed["digest"] = digest.value.decode()

    creators = {}
    for name in PLUGINS:
        creator = registry.get_creator(name, "1", NAMESPACE)
        creators[name] = creator
        observed.setdefault("creators", {})[name] = (
            None
            if creator is None
            else {
                "identity": [creator.name, creator.plugin_version, creator.plugin_namespace],
                "is_v3one": isinstance(creator, trt.IPluginCreatorV3One),
                "under_no_namespace": registry.get_creator(name, "1", "") is not None,
                "under_version_2": registry.get_creator(name, "2", NAMESPACE) is not None,
                "fields": [[f.name, str(f.type), f.size] for f in creator.field_names],
            }
        )
    listed = [[c.name, c.plugin_namespace] for c in registry.all_creators]
    observed["listed"] = [entry for entry in listed if entry[1] == NAMESPACE]

    def field(name: str, value: np.ndarray, kind: Any) -> Any:
        return trt.PluginField(name, value, kind)

    def digest_field(text: str) -> Any:
        return field(
            "bundle_sha256", np.frombuffer(text.encode(), np.int8), trt.PluginFieldType.CHAR
        )

    float32 = trt.PluginFieldType.FLOAT32

    def attempt(plugin: str, fields: list[Any]) -> dict[str, Any]:
        collection = trt.PluginFieldCollection(fields)
        created, err = stderr_of(
            lambda: creators[plugin].create_plugin("probe", collection, trt.TensorRTPhase.BUILD)
        )
        result: dict[str, Any] = {"created": created is not None, "stderr": err}
        if created is not None:
            core = created.get_capability_interface(trt.PluginCapabilityType.CORE)
            build = created.get_capability_interface(trt.PluginCapabilityType.BUILD)
            runtime = created.get_capability_interface(trt.PluginCapabilityType.RUNTIME)
            result["identity"] = [core.plugin_name, core.plugin_version, core.plugin_namespace]
            result["outputs"] = build.num_outputs
            # (The bindings cannot call getFieldsToSerialize of a C++ plugin; the probe does.)
            result["has_runtime"] = runtime is not None
        return result

    good = observed["digest"]
    other = ("1" if good[0] == "0" else "0") + good[1:]
    alpha = np.array([2.5], np.float32)
    bias = np.arange(8, dtype=np.float32)
    observed["attempts"] = {
        "scale": attempt("TensoracleScale", [digest_field(good), field("alpha", alpha, float32)]),
        "bias": attempt("TensoracleBiasAdd", [digest_field(good), field("bias", bias, float32)]),
        "row_dot": attempt("TensoracleRowDot", [digest_field(good)]),
        "alpha_int32": attempt(
            "TensoracleScale",
            [
                digest_field(good),
                field("alpha", np.array([2], np.int32), trt.PluginFieldType.INT32),
            ],
        ),
        "alpha_two_values": attempt(
            "TensoracleScale",
            [digest_field(good), field("alpha", np.array([1, 2], np.float32), float32)],
        ),
        "bias_empty": attempt(
            "TensoracleBiasAdd",
            [digest_field(good), field("bias", np.zeros(0, np.float32), float32)],
        ),
        "no_digest": attempt("TensoracleScale", [field("alpha", alpha, float32)]),
        "other_digest": attempt(
            "TensoracleScale", [digest_field(other), field("alpha", alpha, float32)]
        ),
        "unknown_field": attempt(
            "TensoracleRowDot", [digest_field(good), field("alpha", alpha, float32)]
        ),
    }
    observed["no_creators_loaded"] = registry.load_library(no_creators) is not None
    return observed


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
