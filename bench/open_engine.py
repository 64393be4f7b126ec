"""Warm-cache open_engine (up to, not including, deserialization) vs reading the file.

Builds once a network holding a large constant (default 256 MiB, so the plan is at least that
big), then times, alternately and with a warm page cache, `prepare_engine` (the whole
open_engine path before deserialization: plugin and weight digests, GPU query, identity, shared
lock, header check, plan checksum verification, IO check) and `Path.read_bytes` of the saved
file. On a machine without a GPU, `open_engine` itself stops before deserialization and is timed
too. Prints medians and the ratio against the read_bytes baseline (goal: at most 1.5).

    .venv/bin/python bench/open_engine.py [--mib 256] [--repeat 9] [--quick]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness
import numpy as np
import tensoracle
from safetensors.numpy import save_file
from tensoracle import (
    EngineBuild,
    EngineIO,
    InputShape,
    TensorSpec,
    gpu,
    open_engine,
    prepare_engine,
)


def median_seconds(action: Callable[[], Any], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="constant size in MiB")
    parser.add_argument("--repeat", type=int, default=9)
    arguments = harness.parse(parser, {"mib": 4, "repeat": 1})

    home = Path(tempfile.mkdtemp(prefix="tensoracle-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(home)
    trt = tensoracle.backend().module
    columns = 4096
    rows = arguments.mib * (1 << 20) // (4 * columns)
    weights = home / "weights.safetensors"
    save_file({"scale": np.ones((1,), dtype=np.float32)}, str(weights))

    def graph(network: Any) -> None:
        features = network.add_input("features", trt.float32, (1, columns))
        table = np.random.default_rng(0).standard_normal(
            (rows, columns), dtype=np.float32
        )
        constant = network.add_constant(table.shape, table).get_output(0)
        total = network.add_elementwise(
            features, constant, trt.ElementWiseOperation.SUM
        )
        total.get_output(0).name = "result"
        network.mark_output(total.get_output(0))

    declaration = EngineBuild({"features": InputShape.fixed((1, columns))})
    io = EngineIO(
        {"features": TensorSpec(trt.float32, (1, columns))},
        {"result": TensorSpec(trt.float32, (rows, columns))},
    )
    arguments_open = {
        "name": "bench",
        "graph_version": "1",
        "weights": [weights],
        "io": io,
    }
    started = time.perf_counter()
    prepared = prepare_engine(graph, declaration, **arguments_open)
    size = prepared.path.stat().st_size
    print(
        f"backend {tensoracle.backend().name} {tensoracle.backend().version}; built "
        f"{size / (1 << 20):.1f} MiB in {time.perf_counter() - started:.1f} s at {prepared.path}"
    )

    def forbidden(network: Any) -> None:
        raise AssertionError("the benchmark must hit the cache")

    read = lambda: prepared.path.read_bytes()
    prepare = lambda: prepare_engine(forbidden, declaration, **arguments_open)
    candidates = {"prepare_engine": prepare}
    if gpu.absent_reason() is not None:
        candidates["open_engine (no GPU: stops before deserialization)"] = lambda: (
            open_engine(forbidden, declaration, **arguments_open)
        )
    read()  # warm the page cache
    for action in candidates.values():
        action()
    results: dict[str, list[float]] = {"Path.read_bytes (baseline)": []}
    for name in candidates:
        results[name] = []
    for _ in range(
        arguments.repeat
    ):  # interleaved so that drift hits every candidate alike
        results["Path.read_bytes (baseline)"] += median_seconds(read, 1)
        for name, action in candidates.items():
            results[name] += median_seconds(action, 1)
    baseline = statistics.median(results["Path.read_bytes (baseline)"])
    for name, times in results.items():
        value = statistics.median(times)
        print(
            f"{name:55s} median {value * 1000:8.1f} ms  "
            f"({size / value / (1 << 30):5.2f} GiB/s)  ratio {value / baseline:5.2f}"
        )
    print(
        "goal: ratio <= 1.5 (this machine may be shared; treat the numbers as indicative)"
    )
    shutil.rmtree(home)


if __name__ == "__main__":
    main()
