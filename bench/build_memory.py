"""Resident memory a long-lived process keeps after building an engine.

Each variant runs in a fresh process that builds a 64-layer MLP (512 wide, fp32 weights as
constants) with ``build_serialized_engine`` and reads its resident set (VmRSS) before and after
the build, once the plan bytes are dropped. Baseline: the build without giving the freed heap
back (``tensoracle.engine.memory.release_freed_heap`` replaced by a no-op, as before tensoracle called
``malloc_trim``). Prints both growths in MiB and their ratio (goal: well under 1).

    .venv/bin/python bench/build_memory.py [--layers 64] [--width 512] [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import harness

CHILD = r"""
import gc, json, sys
import numpy as np
import tensoracle
from tensoracle import BuilderSettings, EngineBuild, InputShape
import tensoracle.engine.build

layers, width, trim = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "trim"
if not trim:
    tensoracle.engine.build.release_freed_heap = lambda: False
trt = tensoracle.backend().module


def rss_mib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def graph(network):
    rng = np.random.default_rng(0)
    tensor = network.add_input("x", trt.float32, (1, width))
    for _ in range(layers):
        weights = rng.standard_normal((width, width)).astype(np.float32) / width**0.5
        constant = network.add_constant((width, width), weights)
        product = network.add_matrix_multiply(
            tensor, trt.MatrixOperation.NONE, constant.get_output(0), trt.MatrixOperation.NONE
        )
        tensor = network.add_activation(product.get_output(0), trt.ActivationType.RELU)
        tensor = tensor.get_output(0)
    tensor.name = "y"
    network.mark_output(tensor)


declaration = EngineBuild(
    inputs={"x": InputShape.fixed((1, width))}, settings=BuilderSettings(optimization_level=0)
)
gc.collect()
before = rss_mib()
plan = tensoracle.build_serialized_engine(graph, declaration)
size = len(plan)
del plan
gc.collect()
after = rss_mib()
print(json.dumps({"before": before, "after": after, "plan_mib": size / 2**20}))
"""


def measure(layers: int, width: int, variant: str) -> dict[str, float]:
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, str(layers), str(width), variant],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=64)
    parser.add_argument("--width", type=int, default=512)
    options = harness.parse(parser, {"layers": 4, "width": 64})
    kept = measure(options.layers, options.width, "keep")
    trimmed = measure(options.layers, options.width, "trim")
    grown_kept = kept["after"] - kept["before"]
    grown_trimmed = trimmed["after"] - trimmed["before"]
    print(
        f"{options.layers}-layer MLP, width {options.width}, plan {trimmed['plan_mib']:.1f} MiB"
    )
    print(
        f"without malloc_trim (baseline): {kept['before']:.0f} -> {kept['after']:.0f} MiB "
        f"resident, +{grown_kept:.0f} MiB"
    )
    print(
        f"with malloc_trim:               {trimmed['before']:.0f} -> {trimmed['after']:.0f} MiB "
        f"resident, +{grown_trimmed:.0f} MiB"
    )
    if grown_kept > 0:
        print(f"ratio of growth, with/without: {grown_trimmed / grown_kept:.2f}")
    else:  # a build too small to grow the heap (quick mode): no ratio to compute
        print("ratio of growth, with/without: n/a (the build without it did not grow)")


if __name__ == "__main__":
    main()
