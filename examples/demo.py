"""tensoracle demo: build and save an engine, reopen it in a second process without calling the
graph, list the cache with the `tensoracle` command, and execute it where a GPU is present.

Run with `make demo` (or `.venv/bin/python examples/demo.py`). It uses a fresh cache directory
(printed) unless --cache-home names one; the directory is kept so you can inspect it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np
import simple_model
import tensoracle
from tensoracle import gpu, open_engine, prepare_engine

graph_calls: list[int] = []


def counting_graph(network: Any) -> None:
    graph_calls.append(1)
    simple_model.graph(network)


def arguments() -> dict[str, Any]:
    return {
        "name": simple_model.NAME,
        "graph_version": simple_model.GRAPH_VERSION,
        "weights": [simple_model.WEIGHTS],
        "io": simple_model.io,
    }


def prepare_simple() -> tensoracle.PreparedEngine:
    """Builds and saves (or reuses) the engine; needs no GPU."""
    return prepare_engine(counting_graph, simple_model.declaration, **arguments())


def open_simple() -> tensoracle.EngineHandle:
    """Reopens the saved engine for execution; deserializing it needs a supported GPU."""
    return open_engine(counting_graph, simple_model.declaration, **arguments())


def reopen_in_this_process() -> None:
    """The second process: must reuse the saved engine."""
    prepared = prepare_simple()
    print(f"  second process: built={prepared.built} path={prepared.path}")
    print(f"  graph calls in the second process: {len(graph_calls)}")


def cache_command() -> list[str] | None:
    beside = Path(sys.executable).with_name("tensoracle")
    found = str(beside) if beside.exists() else shutil.which("tensoracle")
    if found is None:
        return None
    usage = subprocess.run(
        [found, "cache", "list", "--help"], check=False, capture_output=True, text=True
    )
    if "--format" in usage.stdout:
        return [found, "cache", "list", "--format", "table"]
    return [found, "cache", "list"]


def list_cache() -> None:
    command = cache_command()
    if command is None:
        print("  skipped: the `tensoracle` command is not installed")
        return
    print(f"  $ {' '.join(['tensoracle', *command[1:]])}")
    result = subprocess.run(command, check=False, capture_output=True, text=True)
    text = (result.stdout + result.stderr).strip()
    print("\n".join(f"  {line}" for line in text.splitlines()))
    if result.returncode != 0:
        print(
            f"  (the command exited with {result.returncode}; this build may lack `cache list`)"
        )


def run_with_cupy(execution: Any, features: np.ndarray) -> np.ndarray:
    import cupy as cp

    trt = tensoracle.backend().module
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        source = cp.asarray(features)
        target = cp.empty(
            tuple(execution.get_tensor_shape("result")),
            dtype=trt.nptype(execution.get_tensor_dtype("result")),
        )
        execution.enqueue(
            {"features": source.data.ptr, "result": target.data.ptr}, stream=stream.ptr
        )
        stream.synchronize()
        return cp.asnumpy(target)


def run_with_cuda_python(execution: Any, features: np.ndarray) -> np.ndarray:
    from cuda.bindings import runtime as cudart

    def check(result: Any) -> Any:
        status, *values = result
        if status != cudart.cudaError_t.cudaSuccess:
            raise RuntimeError(f"CUDA returned {status}")
        return values[0] if values else None

    trt = tensoracle.backend().module
    output = np.empty(
        tuple(execution.get_tensor_shape("result")),
        dtype=trt.nptype(execution.get_tensor_dtype("result")),
    )
    source = check(cudart.cudaMalloc(features.nbytes))
    target = check(cudart.cudaMalloc(output.nbytes))
    stream = check(cudart.cudaStreamCreate())
    try:
        copy = cudart.cudaMemcpyKind
        check(
            cudart.cudaMemcpyAsync(
                source,
                features.ctypes.data,
                features.nbytes,
                copy.cudaMemcpyHostToDevice,
                stream,
            )
        )
        execution.enqueue(
            {"features": int(source), "result": int(target)}, stream=int(stream)
        )
        check(
            cudart.cudaMemcpyAsync(
                output.ctypes.data,
                target,
                output.nbytes,
                copy.cudaMemcpyDeviceToHost,
                stream,
            )
        )
    finally:
        check(cudart.cudaStreamSynchronize(stream))
        check(cudart.cudaStreamDestroy(stream))
        check(cudart.cudaFree(target))
        check(cudart.cudaFree(source))
    return output


def execute() -> bool:
    """Runs the engine and compares with NumPy; returns False only for a wrong result."""
    missing = gpu.absent_reason()
    if missing is not None:
        print(f"  skipped execution and comparison: no GPU here ({missing}).")
        print(
            "  The engine was still built, saved, reused and IO-checked; only deserializing "
            "and running it need a CUDA device."
        )
        return True
    try:
        handle = open_simple()  # reuses the saved engine: the graph is not called again
        handle.engine  # noqa: B018
        execution_unit = handle.create_execution()
    except ImportError as error:
        print(f"  skipped execution: the execution unit is not available ({error})")
        return True
    except (RuntimeError, tensoracle.EngineTargetError) as error:
        # For example TensorRT-RTX on an H100/H200: the engine is not built for sm90
        # (EngineTargetError, a ValueError), or the runtime refuses it.
        print(f"  skipped execution: the backend cannot run the engine here: {error}")
        return True
    features = (np.arange(8, dtype=np.float32).reshape(1, 4, 2) / 4).astype(np.float32)
    with execution_unit as execution:
        execution.set_input_shapes({"features": features.shape})
        try:
            output = run_with_cupy(execution, features)
            library = "CuPy"
        except ImportError:
            try:
                output = run_with_cuda_python(execution, features)
                library = "cuda-python"
            except ImportError:
                print("  skipped execution: neither CuPy nor cuda-python is installed")
                return True
    expected = simple_model.reference(features)
    error = float(np.max(np.abs(output - expected)))
    matches = bool(np.allclose(output, expected, atol=1e-6, rtol=0.0))
    print(
        f"  executed with {library}: max abs error vs NumPy {error:.3g} -> "
        f"{'match' if matches else 'MISMATCH'}"
    )
    return matches


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--cache-home", type=Path, help="XDG_CACHE_HOME to use (default: new)"
    )
    parser.add_argument("--reopen", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.reopen:
        reopen_in_this_process()
        return 0

    home = arguments.cache_home or Path(tempfile.mkdtemp(prefix="tensoracle-demo-"))
    os.environ["XDG_CACHE_HOME"] = str(home)
    chosen = tensoracle.backend()
    print(f"backend: {chosen.name} {chosen.version}; cache: {home / 'tensoracle'}")

    print("1. build and save")
    prepared = prepare_simple()
    print(f"  built={prepared.built} path={prepared.path}")
    print(f"  graph calls in the first process: {len(graph_calls)}")

    print("2. reopen in a second process (the graph must not be called)")
    child = subprocess.run(
        [sys.executable, __file__, "--reopen"],
        check=False,
        capture_output=True,
        text=True,
    )
    print(child.stdout.rstrip())
    if (
        child.returncode != 0
        or "graph calls in the second process: 0" not in child.stdout
    ):
        print(child.stderr)
        print("FAILED: the second process did not reuse the saved engine")
        return 1

    print("3. list the cache")
    list_cache()

    print("4. execute and compare with NumPy")
    return 0 if execute() else 1


if __name__ == "__main__":
    sys.exit(main())
