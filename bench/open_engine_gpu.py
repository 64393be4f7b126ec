"""Warm open_engine against raw deserialization of the same large plan (>= 256 MiB), on a GPU.

Run on a GPU machine: python bench/open_engine_gpu.py [--mib 272] [--repeats 5] [--quick]
Both sides read a file that is already in the page cache. tensoracle's side is a cache hit of
open_engine (header, identity and IO checks, weight digests, deserialization); the baseline is
runtime.deserialize_cuda_engine(open(path, "rb").read()) on a plan file written by
build_serialized_engine, with the runtime created once beforehand. Repeats alternate; prints both
medians and their ratio (goal <= 1.05).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
from safetensors.numpy import save_file
from tensoracle import (
    BuilderSettings,
    EngineBuild,
    EngineIO,
    InputShape,
    TensorSpec,
    backend,
    build_serialized_engine,
    open_engine,
)
from tensoracle.engine import log as tensoracle_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mib", type=int, default=272, help="size of the constant weights"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed opens of each kind"
    )
    args = harness.parse(parser, {"mib": 4, "repeats": 1})
    chosen = backend()
    trt = chosen.module
    count = args.mib * (1 << 20) // 4
    offsets = np.linspace(-1.0, 1.0, count, dtype=np.float32)

    def graph(network) -> None:
        values = network.add_input("values", trt.float32, (count,))
        constant = network.add_constant((count,), offsets).get_output(0)
        total = network.add_elementwise(values, constant, trt.ElementWiseOperation.SUM)
        total.get_output(0).name = "shifted"
        network.mark_output(total.get_output(0))

    declaration = EngineBuild(
        inputs={"values": InputShape.fixed((count,))}, settings=BuilderSettings()
    )
    io = EngineIO(
        inputs={"values": TensorSpec(trt.float32, (count,))},
        outputs={"shifted": TensorSpec(trt.float32, (count,))},
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ["XDG_CACHE_HOME"] = str(root / "cache")
        weights = root / "offsets.safetensors"
        save_file({"offsets": offsets}, str(weights))
        raw = root / "raw.plan"
        raw.write_bytes(build_serialized_engine(graph, declaration))

        def tensoracle_open():
            return open_engine(
                graph,
                declaration,
                name="bench-open",
                graph_version="1",
                weights=(weights,),
                io=io,
            ).engine

        runtime = trt.Runtime(tensoracle_log.trt_logger(chosen))

        def raw_open():
            with open(raw, "rb") as plan:
                return runtime.deserialize_cuda_engine(plan.read())

        first = tensoracle_open()  # builds and saves; later calls are cache hits
        saved = max((root / "cache").rglob("*.engine"), key=lambda p: p.stat().st_size)
        print(
            f"backend {chosen!r}; raw plan {raw.stat().st_size / 2**20:.1f} MiB, "
            f"saved engine {saved.stat().st_size / 2**20:.1f} MiB"
        )
        del first
        timings: dict[str, list[float]] = {"open_engine": [], "raw": []}
        for work in (tensoracle_open, raw_open):  # warm both paths and the page cache
            engine = work()
            assert engine is not None
            del engine
            gc.collect()
        for _ in range(args.repeats):
            for label, work in (("open_engine", tensoracle_open), ("raw", raw_open)):
                started = time.perf_counter()
                engine = work()
                timings[label].append(time.perf_counter() - started)
                assert engine is not None
                del engine
                gc.collect()
    ours = statistics.median(timings["open_engine"])
    base = statistics.median(timings["raw"])
    print(
        f"warm open_engine(...).engine: {ours * 1e3:.1f} ms (median of {args.repeats})"
    )
    print(
        f"raw deserialize_cuda_engine(read()): {base * 1e3:.1f} ms (median of {args.repeats})"
    )
    print(f"ratio: {ours / base:.3f} (goal <= 1.05)")


if __name__ == "__main__":
    main()
