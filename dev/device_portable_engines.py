"""A TensorRT-RTX engine built without a GPU, then taken to a GPU machine: reuse and refusal.

Usage:
    python dev/device_portable_engines.py build FOLDER   # on a machine without a GPU (CI)
    python dev/device_portable_engines.py probe FOLDER   # on the GPU machine, FOLDER copied there

``build`` writes a weight file and prepares the engine for sm86, sm89 and sm120 into
FOLDER/xdg (a cache as a CI job would publish it). ``probe`` opens that cache on the GPU machine
and prints every step: the GPU's description, ``prepare_engine`` (the identity no longer depends
on the GPU, so the CPU-built entry is found), ``open_engine`` (refused before anything is read or
built when the GPU is not among the targets), the backend's validity check of the CPU-built plan
on the real GPU (what open_engine asks before deserializing), and ``open_engine`` with the
machine described as a GPU of the targets (``TENSORACLE_DESCRIBED_GPU``), where the validity
check on the real GPU makes the entry a miss with the reason recorded.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file, save_file

TARGETS = ("sm86", "sm89", "sm120")


def header(path: Path) -> dict[str, Any]:
    """The saved file's JSON header (magic, u32 version, u64 length, JSON)."""
    data = path.read_bytes()
    (length,) = struct.unpack_from("<Q", data, 12)
    result: dict[str, Any] = json.loads(data[20 : 20 + length])
    return result


def step(title: str, action: Any) -> Any:
    print(f"== {title}", flush=True)
    try:
        value = action()
    except Exception as error:  # noqa: BLE001 (the record shows what was raised, then goes on)
        print(f"   raised {type(error).__name__}: {error}", flush=True)
        return error
    print(f"   returned {value!r}", flush=True)
    return value


def main() -> None:
    mode, folder = sys.argv[1], Path(sys.argv[2]).absolute()
    os.environ["XDG_CACHE_HOME"] = str(folder / "xdg")
    import tensoracle
    from tensoracle import (
        BuilderSettings,
        EngineBuild,
        EngineIO,
        InputShape,
        TensorSpec,
        open_engine,
        prepare_engine,
    )
    from tensoracle.engine.log import trt_logger

    chosen = tensoracle.backend()
    trt = chosen.module
    weights = folder / "model.safetensors"
    if mode == "build":
        folder.mkdir(parents=True, exist_ok=True)
        save_file({"bias": np.array([0.5, -1.0], dtype=np.float32)}, str(weights))
    calls: list[int] = []

    def graph(network: Any) -> None:
        calls.append(1)
        bias = load_file(str(weights))["bias"]
        features = network.add_input("features", trt.float32, (1, -1, 2))
        constant = network.add_constant(
            (1, 1, 2), np.ascontiguousarray(bias[None, None, :])
        )
        result = network.add_elementwise(
            features, constant.get_output(0), trt.ElementWiseOperation.SUM
        ).get_output(0)
        result.name = "result"
        network.mark_output(result)

    declaration = EngineBuild(
        inputs={"features": InputShape.ranged((1, 1, 2), (1, 64, 2), (1, 448, 2))},
        settings=BuilderSettings(targets=TARGETS),
    )
    io = EngineIO(
        inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
        outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
    )
    arguments: dict[str, Any] = {
        "name": "portable",
        "graph_version": "1",
        "weights": (weights,),
        "io": io,
    }
    print(f"backend {chosen.name} {chosen.version}", flush=True)
    print("gpu.properties():", json.dumps(tensoracle.gpu.properties()), flush=True)
    print("gpu.absent_reason():", tensoracle.gpu.absent_reason(), flush=True)
    if mode == "build":
        prepared = step(
            "prepare_engine without a GPU",
            lambda: prepare_engine(graph, declaration, **arguments),
        )
        conditions = header(prepared.path)["conditions"]
        print(
            "   conditions gpu/targets:",
            conditions["gpu"],
            conditions["targets"],
            flush=True,
        )
        return

    saved = sorted((folder / "xdg").rglob("*.engine"))
    print("entries carried here:", [path.name for path in saved], flush=True)
    recorded = saved[0].read_bytes()
    prepared = step(
        "prepare_engine on this GPU (the CPU-built entry, found by identity)",
        lambda: prepare_engine(graph, declaration, **arguments),
    )
    print(
        f"   graph calls: {len(calls)}; same file: {prepared.path == saved[0]}",
        flush=True,
    )
    step(
        "open_engine on this GPU", lambda: open_engine(graph, declaration, **arguments)
    )
    print(
        f"   graph calls: {len(calls)}; file unchanged: {saved[0].read_bytes() == recorded}"
    )

    data = saved[0].read_bytes()
    (length,) = struct.unpack_from("<Q", data, 12)
    plan = data[20 + length :]
    runtime = trt.Runtime(trt_logger(chosen))
    step(
        "the backend's validity check of the CPU-built plan on this GPU (no deserialization)",
        lambda: (
            runtime.get_engine_validity(plan),
            chosen.adapter.validity_problem(trt, runtime, plan),
        ),
    )

    pretend = {"name": "described GPU", "compute_capability": "8.9"}
    os.environ[tensoracle.gpu.DESCRIBED_VARIABLE] = json.dumps(pretend)
    step(
        f"open_engine with {tensoracle.gpu.DESCRIBED_VARIABLE}={json.dumps(pretend)}",
        lambda: open_engine(graph, declaration, **arguments),
    )
    references = header(saved[0])["references"]
    print(f"   graph calls: {len(calls)}", flush=True)
    print(
        "   rebuild_reason:", json.dumps(references.get("rebuild_reason")), flush=True
    )


if __name__ == "__main__":
    main()
