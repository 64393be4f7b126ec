"""Answers whether TensorRT-RTX builds, validates, deserializes and executes engines on this GPU.

Usage:
    python dev/rtx_device_probe.py build DIR   # CPU-only AOT build for the default targets
    python dev/rtx_device_probe.py probe DIR   # on a GPU: try the engines in DIR and a local build

Every step prints what TensorRT-RTX logged and the exact exception, so the output is the record.
"""

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import tensorrt_rtx as trt


class RecordingLogger(trt.ILogger):
    """Prints every message TensorRT-RTX logs at INFO or above, with its severity."""

    def __init__(self) -> None:
        trt.ILogger.__init__(self)

    def log(self, severity: Any, msg: str) -> None:
        if severity <= trt.ILogger.Severity.INFO:
            print(f"    [trt {severity.name}] {msg}", flush=True)


LOGGER = RecordingLogger()


def build_plan(targets: list[Any] | None) -> bytes:
    """Builds result = features * 2 + 1 over features (1, [1..8], 2) float32."""
    builder = trt.Builder(LOGGER)
    network = builder.create_network(0)
    features = network.add_input("features", trt.float32, (1, -1, 2))
    scale = network.add_constant((1, 1, 2), np.full((1, 1, 2), 2.0, dtype=np.float32))
    bias = network.add_constant((1, 1, 2), np.full((1, 1, 2), 1.0, dtype=np.float32))
    scaled = network.add_elementwise(
        features, scale.get_output(0), trt.ElementWiseOperation.PROD
    )
    shifted = network.add_elementwise(
        scaled.get_output(0), bias.get_output(0), trt.ElementWiseOperation.SUM
    )
    shifted.get_output(0).name = "result"
    network.mark_output(shifted.get_output(0))
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("features", (1, 1, 2), (1, 4, 2), (1, 8, 2))
    config.add_optimization_profile(profile)
    if targets is not None:
        config.num_compute_capabilities = len(targets)
        for index, target in enumerate(targets):
            config.set_compute_capability(target, index)
    started = time.perf_counter()
    plan = builder.build_serialized_network(network, config)
    print(f"    build took {time.perf_counter() - started:.2f} s", flush=True)
    if plan is None:
        raise RuntimeError("build_serialized_network returned None")
    return bytes(plan)


def step(title: str, action: Any) -> Any:
    print(f"== {title}", flush=True)
    try:
        value = action()
    except Exception:  # noqa: BLE001 -- the probe records every failure and goes on
        print("    FAILED:\n" + traceback.format_exc(), flush=True)
        return None
    print(f"    ok: {value!r}"[:400], flush=True)
    return value


def try_plan(label: str, plan: bytes) -> bool:
    """Checks validity, deserializes, creates a context and runs the engine once with CuPy."""
    import cupy as cp

    runtime = trt.Runtime(LOGGER)
    step(f"{label}: get_engine_validity", lambda: runtime.get_engine_validity(plan))
    engine = step(
        f"{label}: deserialize_cuda_engine",
        lambda: runtime.deserialize_cuda_engine(plan),
    )
    if engine is None:
        return False
    context = step(
        f"{label}: create_execution_context", engine.create_execution_context
    )
    if context is None:
        return False
    stream = cp.cuda.Stream(non_blocking=True)
    features = cp.arange(8, dtype=cp.float32).reshape(1, 4, 2) / 4
    result = cp.zeros((1, 4, 2), dtype=cp.float32)

    def execute() -> float:
        if not context.set_input_shape("features", (1, 4, 2)):
            raise RuntimeError("set_input_shape returned False")
        context.set_tensor_address("features", features.data.ptr)
        context.set_tensor_address("result", result.data.ptr)
        if not context.execute_async_v3(stream.ptr):
            raise RuntimeError("execute_async_v3 returned False")
        stream.synchronize()
        expected = cp.asnumpy(features) * 2 + 1
        error = float(np.abs(cp.asnumpy(result) - expected).max())
        if error > 1e-6:
            raise RuntimeError(f"wrong result, max abs error {error}")
        return error

    return step(f"{label}: execute_async_v3 and compare", execute) is not None


def probe(folder: Path) -> None:
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    print(
        f"device {props['name'].decode()} sm{props['major']}{props['minor']}, "
        f"driver {cp.cuda.runtime.driverGetVersion()}, runtime {cp.cuda.runtime.runtimeGetVersion()}, "
        f"tensorrt_rtx {trt.__version__}, cupy {cp.__version__}, python {sys.version.split()[0]}",
        flush=True,
    )
    outcomes = {}
    aot = folder / "aot_default.plan"
    outcomes["(a) AOT default targets, built off-GPU"] = try_plan(
        "AOT", aot.read_bytes()
    )
    local_default = step("build on this GPU, default targets", lambda: build_plan(None))
    if local_default is not None:
        outcomes["(a') default targets, built here"] = try_plan(
            "local-default", local_default
        )
    current = step(
        "build on this GPU, CURRENT",
        lambda: build_plan([trt.ComputeCapability.CURRENT]),
    )
    outcomes["(b) CURRENT built here"] = current is not None and try_plan(
        "CURRENT", current
    )
    sm80 = step(
        "build on this GPU, SM80 only", lambda: build_plan([trt.ComputeCapability.SM80])
    )
    outcomes["(d) SM80 only"] = sm80 is not None and try_plan("SM80", sm80)
    print("== SUMMARY", flush=True)
    for name, ok in outcomes.items():
        print(f"    {name}: {'executes' if ok else 'does not execute'}", flush=True)


def main() -> None:
    mode, folder = sys.argv[1], Path(sys.argv[2])
    if mode == "build":
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "aot_default.plan").write_bytes(build_plan(None))
    else:
        probe(folder)


if __name__ == "__main__":
    main()
