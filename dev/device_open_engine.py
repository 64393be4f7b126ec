"""On a GPU machine: the GPU description, open_engine, its reuse, prepare_engine and the cache list.

Usage: python dev/device_open_engine.py [PATH_TO_TENSORACLE_CLI]

Works in a fresh temporary XDG_CACHE_HOME and prints every step, so the output is the record.
Where the backend cannot build for the device (TensorRT-RTX on an H200), open_engine raises
EngineTargetError before anything is built or read (before commit cb81330 it saved the engine, then
raised RuntimeError naming the device problem); the script prints either and goes on.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import tensoracle
from safetensors.numpy import load_file, save_file
from tensoracle import BuilderSettings, EngineBuild, EngineIO, InputShape, TensorSpec


def header(path: Path) -> dict[str, Any]:
    """The saved file's JSON header (magic, u32 version, u64 length, JSON)."""
    data = path.read_bytes()
    (length,) = struct.unpack_from("<Q", data, 12)
    return json.loads(data[20 : 20 + length])


def main() -> None:
    cli = sys.argv[1] if len(sys.argv) > 1 else None
    home = Path(tempfile.mkdtemp(prefix="tensoracle-device-"))
    os.environ["XDG_CACHE_HOME"] = str(home / "xdg")
    chosen = tensoracle.backend()
    trt = chosen.module
    print(f"backend {chosen.name} {chosen.version}", flush=True)
    properties = tensoracle.gpu.properties()
    print("gpu.properties():", json.dumps(properties, indent=2), flush=True)
    print("gpu.absent_reason():", tensoracle.gpu.absent_reason(), flush=True)

    weights = home / "model.safetensors"
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
        settings=BuilderSettings(workspace_limit=None, optimization_level=3),
    )
    io = EngineIO(
        inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
        outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
    )
    arguments: dict[str, Any] = {
        "name": "device-check",
        "graph_version": "1",
        "weights": (weights,),
        "io": io,
    }
    saved = sorted((home / "xdg").rglob("*.engine"))
    for attempt in ("first", "second"):
        print(f"== open_engine, {attempt} call", flush=True)
        try:
            handle = tensoracle.open_engine(graph, declaration, **arguments)
            print(f"   returned {handle!r}, built={handle.built}", flush=True)
        except (RuntimeError, tensoracle.EngineTargetError):
            print("   raised:\n" + traceback.format_exc(limit=1), flush=True)
        saved = sorted((home / "xdg").rglob("*.engine"))
        print(
            f"   graph calls so far: {len(calls)}; saved engine files: {saved}",
            flush=True,
        )
    if saved:
        conditions = header(saved[0])["conditions"]
        print("   header conditions.gpu:", json.dumps(conditions["gpu"]), flush=True)
        print("   header conditions.targets:", conditions["targets"], flush=True)
        print("   conditions.gpu == gpu.properties():", conditions["gpu"] == properties)
    print("== prepare_engine (same conditions)", flush=True)
    prepared = tensoracle.prepare_engine(graph, declaration, **arguments)
    print(f"   {prepared!r}; graph calls so far: {len(calls)}", flush=True)
    print("== prepare_engine (graph_version 2)", flush=True)
    prepared = tensoracle.prepare_engine(
        graph, declaration, **{**arguments, "graph_version": "2"}
    )
    print(f"   {prepared!r}; graph calls so far: {len(calls)}", flush=True)
    if cli is not None:
        print("== tensoracle cache list --format table", flush=True)
        listing = subprocess.run(
            [cli, "cache", "list", "--format", "table"],
            check=False,
            capture_output=True,
            text=True,
        )
        print(
            listing.stdout + listing.stderr + f"(exit {listing.returncode})", flush=True
        )


if __name__ == "__main__":
    main()
