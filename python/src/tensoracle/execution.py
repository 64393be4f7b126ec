"""EngineExecution: a TensorRT execution context over an opened engine, run on caller memory."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from tensoracle import log
from tensoracle.errors import ShapeTensorOutputWarning

# Why a unit refuses to answer for concrete shapes or to enqueue (None: it may).
_NOT_SHAPED = "input shapes are not set: call set_input_shapes with every ranged input ({names})"
_INCOMPLETE = (
    "input shapes are incomplete after a failed set_input_shapes call: "
    "call set_input_shapes again with every ranged input ({names})"
)
_CLOSED = "the execution unit is closed"


def _dims(value: Any) -> tuple[int, ...]:
    """A TensorRT Dims (or any sequence of ints) as a plain tuple."""
    return tuple(int(d) for d in value)


class EngineExecution:
    """An independent TensorRT execution context over ``handle.engine``.

    The unit keeps the handle alive, sets fixed inputs and single-point profiles when created,
    and enqueues caller-owned device addresses on a caller-owned stream. It never allocates,
    copies or synchronizes. Use it from one thread at a time; close it (or leave its ``with``
    block) only after the work it enqueued has completed.
    """

    def __init__(self, handle: Any) -> None:
        # Set first, so close() and __del__ work on a unit whose creation failed.
        self._closed = False
        self._context: Any = None
        self._handle: Any = None
        self._blocked: str | None = _CLOSED
        self._set_address: Any = None
        self._execute: Any = None

        shape_outputs = tuple(getattr(handle, "shape_tensor_outputs", None) or ())
        if shape_outputs:
            # Before the context exists: TensorRT may crash the process while executing such
            # engines, and a caller who turned the warning into an error stops here safely.
            warnings.warn(
                f"engine outputs {', '.join(repr(n) for n in shape_outputs)} are shape tensors; "
                "execution units cannot handle them and enqueue may crash the process",
                ShapeTensorOutputWarning,
                stacklevel=2,
            )
        engine = handle.engine
        inputs, outputs = _classify_io(engine)
        self._inputs = tuple(inputs)
        self._outputs = tuple(outputs)
        self._io_names = (*self._inputs, *self._outputs)
        self._io_count = len(self._io_names)
        self._io_set = frozenset(self._io_names)
        self._ranks = {name: len(engine.get_tensor_shape(name)) for name in self._io_names}
        self._engine = engine

        with log.capture() as errors:
            context = engine.create_execution_context()
        if context is None:
            raise RuntimeError(
                "TensorRT could not create an execution context for this engine: "
                + log.describe(errors)
            )
        self._context = context
        self._handle = handle
        try:
            self._ranged = self._initialize_inputs()
        except BaseException:
            self.close()
            raise
        self._set_address = context.set_tensor_address
        self._execute = context.execute_async_v3
        self._blocked = self._not_shaped_reason() if self._ranged else None

    # ---- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> EngineExecution:
        self._check_open()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Releases the TensorRT context, then the handle, without waiting; repeats do nothing."""
        if self._closed:
            return
        self._closed = True
        self._blocked = _CLOSED
        # The bound methods hold the context too: drop them with it, before the handle.
        self._set_address = None
        self._execute = None
        self._context = None
        self._engine = None
        self._handle = None

    def __del__(self) -> None:
        if getattr(self, "_closed", True) is False:
            self.close()

    @property
    def closed(self) -> bool:
        """True once close() ran (or the context manager exited)."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(_CLOSED)

    # ---- tensors -------------------------------------------------------------------------------

    @property
    def input_names(self) -> tuple[str, ...]:
        """Every input tensor name, in the engine's order."""
        return self._inputs

    @property
    def output_names(self) -> tuple[str, ...]:
        """Every output tensor name, in the engine's order."""
        return self._outputs

    @property
    def ranged_input_names(self) -> tuple[str, ...]:
        """Inputs whose shapes set_input_shapes takes (profile minimum differs from maximum)."""
        return self._ranged

    def get_tensor_dtype(self, name: str) -> Any:
        """The TensorRT data type of an input or output."""
        self._check_open()
        self._check_name(name)
        return self._engine.get_tensor_dtype(name)

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        """The concrete shape of an input or output under the current input shapes."""
        self._check_open()
        self._check_name(name)
        if self._blocked is not None:
            raise RuntimeError(f"cannot report the shape of {name!r}: {self._blocked}")
        return _dims(self._context.get_tensor_shape(name))

    def _check_name(self, name: object) -> None:
        if name not in self._io_set:
            known = ", ".join(repr(n) for n in self._io_names)
            raise ValueError(f"unknown tensor name {name!r}; the engine has {known}")

    # ---- input shapes --------------------------------------------------------------------------

    def set_input_shapes(self, shapes: Mapping[str, Any]) -> None:
        """Sets every ranged input's shape at once; earlier shapes stay until this succeeds.

        Names, ranks and dimension types are checked before TensorRT is called. When TensorRT
        then rejects a shape (outside the profile, say), concrete shape queries and enqueue are
        refused until a later call sets every ranged input.
        """
        self._check_open()
        if not isinstance(shapes, Mapping):
            raise TypeError(
                f"shapes must be a mapping of input name to shape, got {type(shapes).__name__}"
            )
        checked = self._check_shapes(shapes)
        context = self._context
        rejected = []
        for name, dims in checked.items():
            with log.capture() as errors:
                try:
                    ok = context.set_input_shape(name, dims)
                except Exception as error:
                    ok = False
                    errors.append(str(error))
            if not ok:
                rejected.append(
                    f"{name!r} {dims} (profile 0 allows {self._range(name)}): "
                    + log.describe(errors)
                )
        if rejected:
            self._blocked = self._incomplete_reason()
            raise ValueError(
                "TensorRT rejected the shape of "
                + "; ".join(rejected)
                + "; input shapes stay incomplete until set_input_shapes succeeds"
            )
        self._blocked = None

    def _check_shapes(self, shapes: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
        problems = []
        unknown = [n for n in shapes if n not in self._ranged]
        for name in unknown:
            if name in self._inputs:
                problems.append(
                    f"{name!r} is not a ranged input (its shape is fixed by the engine profile)"
                )
            else:
                problems.append(f"{name!r} is not an input of the engine")
        missing = [n for n in self._ranged if n not in shapes]
        if missing:
            problems.append("missing ranged inputs " + ", ".join(repr(n) for n in missing))
        checked: dict[str, tuple[int, ...]] = {}
        for name in self._ranged:
            if name not in shapes:
                continue
            value = shapes[name]
            try:
                dims = tuple(value)
            except TypeError:
                problems.append(f"{name!r}: shape {value!r} is not a sequence of ints")
                continue
            rank = self._ranks[name]
            if len(dims) != rank:
                problems.append(f"{name!r}: shape {value!r} has rank {len(dims)}, expected {rank}")
                continue
            bad = [d for d in dims if type(d) is not int or d < 0]
            if bad:
                problems.append(
                    f"{name!r}: shape {value!r} has dimensions {bad!r} that are not "
                    "nonnegative ints"
                )
                continue
            checked[name] = dims
        if problems:
            raise ValueError("invalid input shapes: " + "; ".join(problems))
        return checked

    def _range(self, name: str) -> str:
        low, _, high = self._engine.get_tensor_profile_shape(name, 0)
        return f"{_dims(low)} to {_dims(high)}"

    def _not_shaped_reason(self) -> str:
        return _NOT_SHAPED.format(names=", ".join(repr(n) for n in self._ranged))

    def _incomplete_reason(self) -> str:
        return _INCOMPLETE.format(names=", ".join(repr(n) for n in self._ranged))

    def _initialize_inputs(self) -> tuple[str, ...]:
        """Sets fixed and single-point inputs, rejects data-dependent outputs, returns ranged names.

        Data-dependent output sizes are found by setting every ranged input to its profile's
        optimum shape: an output dimension TensorRT still reports as -1 then depends on tensor
        values, not on input dimensions.
        """
        engine, context = self._engine, self._context
        ranged = []
        for name in self._inputs:
            shape = _dims(engine.get_tensor_shape(name))
            if -1 not in shape:
                point = shape
            else:
                low, optimum, high = (_dims(s) for s in engine.get_tensor_profile_shape(name, 0))
                if low == high:
                    point = low
                else:
                    ranged.append(name)
                    point = optimum
            if not context.set_input_shape(name, point):
                raise RuntimeError(
                    f"TensorRT rejected the shape {point} of input {name!r} when creating the "
                    "execution unit"
                )
        dependent = {}
        for name in self._outputs:
            shape = _dims(context.get_tensor_shape(name))
            if -1 in shape:
                dependent[name] = shape
        if dependent:
            listed = ", ".join(f"{n!r} {s}" for n, s in dependent.items())
            raise ValueError(
                f"outputs with data-dependent sizes are not supported by execution units: {listed}"
            )
        return tuple(ranged)

    # ---- enqueue -------------------------------------------------------------------------------

    def enqueue(self, addresses: Mapping[str, int], *, stream: int) -> None:
        """Binds one device address per input and output, then enqueues on ``stream``.

        Returns once TensorRT has queued the work; the caller synchronizes the stream.
        """
        if self._blocked is not None:
            self._check_open()
            raise RuntimeError(f"cannot enqueue: {self._blocked}")
        if type(stream) is not int or stream < 0:
            _reject_stream(stream)
        try:
            if len(addresses) != self._io_count:
                raise KeyError
            for name in self._io_names:
                address = addresses[name]
                if type(address) is not int or address <= 0:
                    raise KeyError
        except (KeyError, TypeError):
            self._reject_addresses(addresses)
            raise
        set_address = self._set_address
        for name in self._io_names:
            set_address(name, addresses[name])
        if not self._execute(stream):
            raise RuntimeError(
                "TensorRT execute_async_v3 reported failure (see the TensorRT log for the reason)"
            )

    def _reject_addresses(self, addresses: Any) -> None:
        """Raises the error that names what is wrong with an addresses argument."""
        if not isinstance(addresses, Mapping):
            raise TypeError(
                f"addresses must map tensor names to device addresses, "
                f"got {type(addresses).__name__}"
            )
        problems = []
        missing = [n for n in self._io_names if n not in addresses]
        if missing:
            problems.append("missing addresses for " + ", ".join(repr(n) for n in missing))
        extra = [n for n in addresses if n not in self._io_set]
        if extra:
            problems.append("unknown tensor names " + ", ".join(repr(n) for n in extra))
        wrong_type = []
        for name in self._io_names:
            if name not in addresses:
                continue
            value = addresses[name]
            if type(value) is not int:
                wrong_type.append(f"{name!r}: {value!r} ({type(value).__name__})")
            elif value <= 0:
                problems.append(f"{name!r}: address {value} is not positive")
        if wrong_type:
            raise TypeError("device addresses must be positive ints; got " + "; ".join(wrong_type))
        raise ValueError("invalid tensor addresses: " + "; ".join(problems))


def _reject_stream(stream: object) -> None:
    if type(stream) is not int:
        raise TypeError(
            f"stream must be a nonnegative int CUDA stream handle, got {stream!r} "
            f"({type(stream).__name__})"
        )
    raise ValueError(f"stream must be a nonnegative int CUDA stream handle, got {stream}")


def _classify_io(engine: Any) -> tuple[list[str], list[str]]:
    """Splits the engine's tensors into inputs and outputs, rejecting what units cannot run."""
    inputs, outputs, problems = [], [], []
    for index in range(engine.num_io_tensors):
        name = engine.get_tensor_name(index)
        mode = engine.get_tensor_mode(name).name
        if engine.get_tensor_location(name).name == "HOST":
            problems.append(f"{name!r} is a HOST-location tensor")
        if mode == "INPUT":
            if engine.is_shape_inference_io(name):
                problems.append(f"input {name!r} is a shape tensor (its values set shapes)")
            inputs.append(name)
        elif mode == "OUTPUT":
            outputs.append(name)
    if problems:
        raise ValueError("the engine cannot be run by an execution unit: " + "; ".join(problems))
    return inputs, outputs
