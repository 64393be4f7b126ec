"""Recording stand-ins for a TensorRT engine and execution context, for GPU-free unit tests.

They answer metadata queries with real TensorRT-RTX enum values and record every call, so the
tests can check EngineExecution's own rules (validation, call order, closing). They compute
nothing: the GPU tests in test_execution_gpu.py run the same rules against TensorRT itself.
test_execution.py checks that every method used here exists on the real TensorRT classes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

trt = pytest.importorskip("tensorrt_rtx")

Shape = tuple[int, ...]

ENGINE_METHODS = (
    "num_io_tensors",
    "get_tensor_name",
    "get_tensor_mode",
    "get_tensor_location",
    "is_shape_inference_io",
    "get_tensor_shape",
    "get_tensor_dtype",
    "get_tensor_profile_shape",
    "create_execution_context",
)
CONTEXT_METHODS = ("set_input_shape", "get_tensor_shape", "set_tensor_address", "execute_async_v3")


@dataclass
class Tensor:
    name: str
    mode: str  # "INPUT" or "OUTPUT"
    shape: Shape
    profile: tuple[Shape, Shape, Shape] | None = None
    location: str = "DEVICE"
    shape_io: bool = False
    # For outputs: the shape under the current input shapes (default: like the first input).
    rule: Callable[[dict[str, Shape]], Shape] | None = None


@dataclass
class Recorder:
    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]


class RecordingContext:
    def __init__(self, engine: RecordingEngine) -> None:
        self._engine = engine
        self._calls = engine.recorder.calls
        self.shapes: dict[str, Shape] = {}
        self.execute_result = True

    def set_input_shape(self, name: str, dims: Shape) -> bool:
        self._calls.append(("set_input_shape", name, tuple(dims)))
        tensor = self._engine.tensors[name]
        low, _, high = tensor.profile or (tensor.shape, tensor.shape, tensor.shape)
        inside = len(dims) == len(low) and all(
            lo <= d <= hi for lo, d, hi in zip(low, dims, high, strict=True)
        )
        if inside:
            self.shapes[name] = tuple(dims)
        return inside

    def get_tensor_shape(self, name: str) -> Shape:
        self._calls.append(("get_tensor_shape", name))
        tensor = self._engine.tensors[name]
        if tensor.mode == "INPUT":
            return self.shapes.get(name, tensor.shape)
        if tensor.rule is not None:
            return tensor.rule(self.shapes)
        first = next(t.name for t in self._engine.tensors.values() if t.mode == "INPUT")
        return self.shapes.get(first, tensor.shape)

    def set_tensor_address(self, name: str, address: int) -> bool:
        self._calls.append(("set_tensor_address", name, address))
        return True

    def execute_async_v3(self, stream: int) -> bool:
        self._calls.append(("execute_async_v3", stream))
        return self.execute_result


class RecordingEngine:
    def __init__(self, tensors: list[Tensor], *, context_fails: bool = False) -> None:
        self.tensors = {t.name: t for t in tensors}
        self._order = [t.name for t in tensors]
        self.recorder = Recorder()
        self.context_fails = context_fails
        self.contexts: list[RecordingContext] = []

    @property
    def num_io_tensors(self) -> int:
        return len(self._order)

    def get_tensor_name(self, index: int) -> str:
        return self._order[index]

    def get_tensor_mode(self, name: str) -> Any:
        return trt.TensorIOMode.__members__[self.tensors[name].mode]

    def get_tensor_location(self, name: str) -> Any:
        return trt.TensorLocation.__members__[self.tensors[name].location]

    def is_shape_inference_io(self, name: str) -> bool:
        return self.tensors[name].shape_io

    def get_tensor_shape(self, name: str) -> Shape:
        return self.tensors[name].shape

    def get_tensor_dtype(self, name: str) -> Any:
        self.recorder.calls.append(("get_tensor_dtype", name))
        return trt.float32

    def get_tensor_profile_shape(self, name: str, profile: int) -> list[Shape]:
        assert profile == 0
        tensor = self.tensors[name]
        return list(tensor.profile or (tensor.shape, tensor.shape, tensor.shape))

    def create_execution_context(self) -> RecordingContext | None:
        self.recorder.calls.append(("create_execution_context",))
        if self.context_fails:
            return None
        context = RecordingContext(self)
        self.contexts.append(context)
        return context


class Handle:
    """Holds an engine the way tensoracle's EngineHandle does (engine, runtime, shape outputs)."""

    def __init__(self, engine: Any, shape_tensor_outputs: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.runtime = object()
        self.shape_tensor_outputs = shape_tensor_outputs


def features_engine(**kwargs: Any) -> RecordingEngine:
    """The README's example: features (1, -1, 2) ranged 1..448 -> result of the same shape."""
    return RecordingEngine(
        [
            Tensor("features", "INPUT", (1, -1, 2), ((1, 1, 2), (1, 64, 2), (1, 448, 2))),
            Tensor("result", "OUTPUT", (1, -1, 2)),
        ],
        **kwargs,
    )
