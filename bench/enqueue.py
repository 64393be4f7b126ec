"""Per-call cost of EngineExecution.enqueue against the backend's own calls, on a tiny engine.

Run on a GPU machine: python bench/enqueue.py [--calls N] [--rounds R] [--quick]
Baseline: a second execution context on the same engine, bound with set_tensor_address for each
tensor and launched with execute_async_v3, exactly what enqueue does after its checks. Rounds of
each alternate; only the host-side time of the enqueue calls is timed (the stream is drained
between rounds, outside the timing). Prints both medians and their ratio (goal <= 1.1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
from tensoracle import (
    BuilderSettings,
    EngineBuild,
    EngineIO,
    InputShape,
    TensorSpec,
    backend,
    open_engine,
)


def open_tiny_engine(folder: Path):
    trt = backend().module
    bias = np.array([[[0.5, -1.0]]], dtype=np.float32)
    weights = folder / "bias.safetensors"
    from safetensors.numpy import save_file

    save_file({"bias": bias.reshape(2)}, str(weights))

    def graph(network) -> None:
        features = network.add_input("features", trt.float32, (1, -1, 2))
        constant = network.add_constant(bias.shape, bias).get_output(0)
        total = network.add_elementwise(
            features, constant, trt.ElementWiseOperation.SUM
        )
        total.get_output(0).name = "result"
        network.mark_output(total.get_output(0))

    return open_engine(
        graph,
        EngineBuild(
            inputs={"features": InputShape.ranged((1, 1, 2), (1, 4, 2), (1, 8, 2))},
            settings=BuilderSettings(),
        ),
        name="bench-enqueue",
        graph_version="1",
        weights=(weights,),
        io=EngineIO(
            inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
            outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--calls", type=int, default=200, help="enqueues per timed round"
    )
    parser.add_argument(
        "--rounds", type=int, default=50, help="timed rounds of each kind"
    )
    args = harness.parse(parser, {"calls": 10, "rounds": 2})

    import cupy as cp

    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_CACHE_HOME"] = str(Path(folder) / "cache")
        handle = open_tiny_engine(Path(folder))
        stream = cp.cuda.Stream(non_blocking=True)
        features = cp.ones((1, 4, 2), dtype=cp.float32)
        result = cp.zeros((1, 4, 2), dtype=cp.float32)
        addresses = {"features": features.data.ptr, "result": result.data.ptr}
        with handle.create_execution() as unit:
            unit.set_input_shapes({"features": (1, 4, 2)})
            context = handle.engine.create_execution_context()
            context.set_input_shape("features", (1, 4, 2))
            set_address, execute = context.set_tensor_address, context.execute_async_v3
            names = tuple(addresses)
            handle_stream = stream.ptr

            def through_unit() -> None:
                for _ in range(args.calls):
                    unit.enqueue(addresses, stream=handle_stream)

            def direct() -> None:
                for _ in range(args.calls):
                    for name in names:
                        set_address(name, addresses[name])
                    execute(handle_stream)

            timings: dict[str, list[float]] = {"unit": [], "direct": []}
            for warm_up in (through_unit, direct):
                warm_up()
                stream.synchronize()
            for _ in range(args.rounds):
                for label, work in (("unit", through_unit), ("direct", direct)):
                    started = time.perf_counter()
                    work()
                    timings[label].append((time.perf_counter() - started) / args.calls)
                    stream.synchronize()
            del context
    unit_us = statistics.median(timings["unit"]) * 1e6
    direct_us = statistics.median(timings["direct"]) * 1e6
    print(f"backend {backend()!r}, {args.rounds} rounds x {args.calls} calls")
    print(f"EngineExecution.enqueue: {unit_us:.2f} us/call (median)")
    print(f"set_tensor_address + execute_async_v3: {direct_us:.2f} us/call (median)")
    print(f"ratio: {unit_us / direct_us:.3f} (goal <= 1.1)")


if __name__ == "__main__":
    main()
