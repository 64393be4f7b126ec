"""Prepares the run of examples/cpp_inference on a GPU machine (no GPU needed here).

`python dev/device_cpp_inference.py DIR` writes into DIR:
- `cache/tensoracle/<entry>`: a TensorRT 11.4.0.106 entry with hardware_compatibility
  "ampere_plus" (it runs on every GPU from sm80 on) whose plan is 4 KiB of random bytes, not a
  plan TensorRT can deserialize (no full TensorRT 11 can be had to build one), saved by the store;
- `deploy-tensorrt.json`: a manifest holding that entry, so that on an sm90 GPU the example selects
  it, opens and verifies it, and hands it to TensorRT, which must refuse it (reported, exit 1);
- `deploy-rtx.json`: a manifest of one TensorRT-RTX entry for sm86, sm89 and sm120, which the
  example must refuse on an sm90 GPU naming sm90 and the targets;
- `inputs/x.bin` and `expected/y.bin`: the example's input and expected output (8 float32 each).
Then, on the GPU machine, with the example built against the TensorRT 11.4 lean runtime:
  XDG_CACHE_HOME=DIR/cache cpp_inference DIR/deploy-tensorrt.json encoder DIR/inputs OUT \
      --expected DIR/expected
  XDG_CACHE_HOME=DIR/cache cpp_inference DIR/deploy-rtx.json encoder DIR/inputs OUT
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import xxhash
from tensoracle import _core

IO = {
    "tensors": [
        {"name": "x", "mode": "INPUT", "dtype": "FLOAT", "shape": [1, 8], "location": "DEVICE",
         "format": "LINEAR", "profile": {"min": [1, 8], "opt": [1, 8], "max": [1, 8]}},
        {"name": "y", "mode": "OUTPUT", "dtype": "FLOAT", "shape": [1, 8], "location": "DEVICE",
         "format": "LINEAR"},
    ]
}  # fmt: skip


def saved_entry(store: Any, conditions: dict[str, Any], seed: int) -> dict[str, Any]:
    identity = _core.make_identity(json.dumps(conditions))
    plan = np.random.default_rng(seed).integers(0, 256, 4096, dtype=np.uint8)
    path = Path(store.save(identity, json.dumps({"io": IO}), plan))
    return {
        "recipe": "encoder",
        "graph_version": conditions["graph_version"],
        "file_name": path.name,
        "conditions": conditions,
        "backend": conditions["backend"],
        "backend_version": conditions["backend_version"],
        "targets": conditions["targets"],
        "hardware_compatibility": conditions.get("hardware_compatibility"),
        "io": IO,
        "plan": {
            "size": plan.size,
            "xxh3_128": xxhash.xxh3_128(plan.tobytes()).hexdigest(),
        },
        "engine_bytes": path.stat().st_size,
        "fleet": None,
    }


def write_manifest(path: Path, entry: dict[str, Any]) -> None:
    document = {
        "schema_version": 1,
        "spec": "device:RECIPES",
        "remote": None,
        "entries": [entry],
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def main(folder: Path) -> None:
    store = _core.Store(str(folder / "cache" / "tensoracle"))
    tensorrt = {
        "name": "encoder",
        "graph_version": "1",
        "backend": "tensorrt",
        "backend_version": "11.4.0.106",
        "gpu": None,
        "hardware_compatibility": "ampere_plus",
        "targets": [],
    }
    rtx = {
        "name": "encoder",
        "graph_version": "1",
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "gpu": None,
        "targets": ["sm86", "sm89", "sm120"],
    }
    write_manifest(folder / "deploy-tensorrt.json", saved_entry(store, tensorrt, 1))
    write_manifest(folder / "deploy-rtx.json", saved_entry(store, rtx, 2))
    for name, values in (
        ("inputs/x.bin", np.arange(8)),
        ("expected/y.bin", np.arange(8) * 2),
    ):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        values.astype(np.float32).tofile(folder / name)
    print(
        f"prepared {folder}: deploy-tensorrt.json, deploy-rtx.json, cache/tensoracle/, "
        "inputs/, expected/"
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python dev/device_cpp_inference.py DIR")
    main(Path(sys.argv[1]))
