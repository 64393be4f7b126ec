"""EngineExecution: a TensorRT execution context over an opened engine, run on caller memory."""

from __future__ import annotations

import ctypes
import warnings
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from tensoracle.engine import log
from tensoracle.errors import ShapeTensorOutputWarning, caller_stacklevel, shape_output_message
from tensoracle.execution.io_table import (
    IOTable,
    IOTensor,
    capture_problem,
    shape_inference_error,
    shape_of,
    shape_outputs,
)
from tensoracle.gpu import driver_library

_CLOSED = "the execution unit is closed"
_CAPTURE_STATUS_ACTIVE = 1  # CU_STREAM_CAPTURE_STATUS_ACTIVE


def describe_io(engine: Any) -> tuple[IOTensor, ...]:
    """Reads each IO tensor of a TensorRT engine into plain data (profile 0 for inputs)."""
    aliased = getattr(engine, "get_aliased_input_tensor", None)
    tensors = []
    for index in range(engine.num_io_tensors):
        name = engine.get_tensor_name(index)
        mode = engine.get_tensor_mode(name).name
        shape = shape_of(engine.get_tensor_shape(name), f"tensor {name!r} of the engine")
        profile = None
        if mode == "INPUT" and -1 in shape:
            low, optimum, high = engine.get_tensor_profile_shape(name, 0)
            what = f"input {name!r} in profile 0"
            profile = (shape_of(low, what), shape_of(optimum, what), shape_of(high, what))
        tensors.append(
            IOTensor(
                name=name,
                mode=mode,
                shape=shape,
                location=engine.get_tensor_location(name).name,
                is_shape_io=bool(engine.is_shape_inference_io(name)),
                profile=profile,
                format=engine.get_tensor_format(name).name,
                aliased_input=(aliased(name) or None) if mode == "OUTPUT" and aliased else None,
            )
        )
    return tuple(tensors)


def _capture_query() -> Callable[[int], bool] | None:
    """``capturing(stream)``: whether CUDA stream capture is active on ``stream`` (driver API)."""
    try:
        driver = ctypes.CDLL(driver_library())
    except OSError:
        return None
    query = driver.cuStreamIsCapturing
    query.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    query.restype = ctypes.c_int

    def capturing(stream: int) -> bool:
        status = ctypes.c_int(0)
        # Errors (no current context, say) read as "not capturing": TensorRT reports those.
        return query(stream or None, ctypes.byref(status)) == 0 and (
            status.value == _CAPTURE_STATUS_ACTIVE
        )

    return capturing


def _specialization(context: Any) -> str | None:
    """The TensorRT-RTX context's dynamic-shape kernel specialization strategy, by name."""
    try:
        return str(context.get_runtime_config().dynamic_shapes_kernel_specialization_strategy.name)
    except (AttributeError, RuntimeError):
        return None


class EngineExecution:
    """An independent TensorRT execution context over ``handle.engine``.

    The unit keeps the handle alive, sets fixed inputs and single-point profiles when created,
    and enqueues caller-owned device addresses on a caller-owned stream. It never allocates,
    copies or synchronizes. Use it from one thread at a time; close it (or leave its ``with``
    block) only after the work it enqueued has completed. Its rules that need no TensorRT live
    in ``tensoracle.io_table.IOTable``; this class applies them and calls TensorRT.
    """

    def __init__(self, handle: Any) -> None:
        # Set first, so close() and __del__ work on a unit whose creation failed.
        self._closed = False
        self._context: Any = None
        self._handle: Any = None
        self._blocked: str | None = _CLOSED
        self._set_address: Any = None
        self._execute: Any = None
        self._capturing: Callable[[int], bool] | None = None
        self._specialization: str | None = None

        # Before the context exists: TensorRT may crash the process while executing such
        # engines, and a caller who turned the warning into an error stops here safely. The
        # saved header names them before the engine is even deserialized; the engine itself
        # names them too (for files saved without the header field).
        recorded = tuple(getattr(handle, "shape_tensor_outputs", None) or ())
        if recorded:
            warnings.warn(
                shape_output_message(recorded),
                ShapeTensorOutputWarning,
                stacklevel=caller_stacklevel(),
            )
        engine = handle.engine
        described = describe_io(engine)
        unrecorded = tuple(n for n in shape_outputs(described) if n not in recorded)
        if unrecorded:
            warnings.warn(
                shape_output_message(unrecorded),
                ShapeTensorOutputWarning,
                stacklevel=caller_stacklevel(),
            )
        table = IOTable(described)
        self._table = table
        self._inputs = table.inputs
        self._outputs = table.outputs
        self._ranged = table.ranged
        self._io_names = table.names
        self._check_enqueue = table.check_enqueue
        self._check_name = table.check_name
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
            self._initialize_inputs()
        except BaseException:
            self.close()
            raise
        self._set_address = context.set_tensor_address
        self._execute = context.execute_async_v3
        if hasattr(context, "is_stream_capturable"):  # TensorRT-RTX: check captured enqueues
            self._capturing = _capture_query()
            self._specialization = _specialization(context)
        self._blocked = table.blocked_at_creation

    # ---- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> EngineExecution:
        self._check_open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
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
        return shape_of(self._context.get_tensor_shape(name), f"tensor {name!r}")

    # ---- input shapes --------------------------------------------------------------------------

    def set_input_shapes(self, shapes: Mapping[str, Any]) -> None:
        """Sets every ranged input's shape at once; earlier shapes stay until this succeeds.

        Names, ranks and dimension types are checked before TensorRT is called. When TensorRT
        then rejects a shape (outside the profile, say), its shape inference rejects the
        combination (inputs whose sizes contradict each other) or an output's shape stays
        unresolved (RuntimeError naming the output), concrete shape queries and enqueue are
        refused until a later call sets every ranged input.
        """
        self._check_open()
        checked = self._table.check_shapes(shapes)
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
                rejected.append((name, dims, log.describe(errors)))
        if rejected:
            self._blocked = self._table.incomplete_reason
            raise self._table.rejection_error(rejected)
        inference = self._infer_shapes()
        if inference is not None:
            self._blocked = self._table.incomplete_reason
            raise inference
        unresolved = self._table.unresolved_output_error(self._output_shapes())
        if unresolved is not None:
            self._blocked = self._table.incomplete_reason
            raise unresolved
        self._blocked = None

    def _output_shapes(self) -> dict[str, tuple[int, ...] | None]:
        """Each output's shape as TensorRT reports it now; None where it reports none valid."""
        shapes: dict[str, tuple[int, ...] | None] = {}
        for name in self._outputs:
            try:
                shapes[name] = shape_of(self._context.get_tensor_shape(name), f"output {name!r}")
            except RuntimeError:  # rank -1: no valid shape
                shapes[name] = None
        return shapes

    def _infer_shapes(self) -> RuntimeError | None:
        """Runs TensorRT's shape inference; the error naming what it reports, or None."""
        with log.capture() as errors:
            try:
                insufficient = [str(n) for n in self._context.infer_shapes()]
                failure = None
            except RuntimeError as error:
                insufficient = []
                failure = "; ".join([str(error), *errors])
        return shape_inference_error(insufficient, failure)

    def _initialize_inputs(self) -> None:
        """Sets every input to its creation shape, then rejects data-dependent outputs.

        Ranged inputs are set to their profile's optimum: an output dimension TensorRT still
        reports as -1 then depends on tensor values, not on input dimensions.
        """
        context = self._context
        for name, point in self._table.creation_shapes.items():
            if not context.set_input_shape(name, point):
                raise RuntimeError(
                    f"TensorRT rejected the shape {point} of input {name!r} when creating the "
                    "execution unit"
                )
        inference = self._infer_shapes()
        if inference is not None:
            raise RuntimeError(
                f"creating the execution unit at each input's creation shape failed: {inference}"
            )
        self._table.check_output_shapes(
            {
                name: shape_of(context.get_tensor_shape(name), f"output {name!r}")
                for name in self._outputs
            }
        )

    # ---- enqueue -------------------------------------------------------------------------------

    def enqueue(self, addresses: Mapping[str, int], *, stream: int) -> None:
        """Binds one device address per input and output, then enqueues on ``stream``.

        Returns once TensorRT has queued the work; the caller synchronizes the stream.
        """
        # In tensoracle 1.x's order: closed, then the arguments, then whether shapes are set.
        self._check_open()
        self._check_enqueue(addresses, stream)
        if self._blocked is not None:
            raise RuntimeError(f"cannot enqueue: {self._blocked}")
        if self._capturing is not None and self._capturing(stream):
            problem = capture_problem(
                bool(self._context.is_stream_capturable(stream)),
                self._specialization,
                self._ranged,
            )
            if problem is not None:
                raise RuntimeError(f"cannot record this enqueue in a CUDA graph: {problem}")
        set_address = self._set_address
        for name in self._io_names:
            # A refused address must not leave the previous (stale) buffer bound for this launch.
            if not set_address(name, addresses[name]):
                raise RuntimeError(
                    f"TensorRT refused the address {addresses[name]:#x} for tensor {name!r} "
                    "(misaligned or otherwise unusable; see the TensorRT log)"
                )
        if not self._execute(stream):
            raise RuntimeError(
                "enqueue failed: TensorRT execute_async_v3 reported failure (see the TensorRT "
                "log for the reason)"
            )
