"""An engine's IO tensors as plain data, and the execution unit's rules that need no TensorRT.

``EngineExecution`` describes each IO tensor of its engine once, as an ``IOTensor``, and builds an
``IOTable`` from them. The table decides which engines a unit can run, which inputs are ranged and
what shapes are set at creation, and it validates ``set_input_shapes`` and ``enqueue`` arguments
before TensorRT is called. Nothing here imports TensorRT.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Shape = tuple[int, ...]
Profile = tuple[Shape, Shape, Shape]

_MODES = ("INPUT", "OUTPUT")
# TensorRT requires every tensor address to be aligned to at least 256 bytes.
ADDRESS_ALIGNMENT = 256
# The only IO format an execution unit runs: row-major, contiguous, no vector padding.
LINEAR = "LINEAR"


def shape_of(value: Any, what: str) -> Shape:
    """A TensorRT ``Dims`` (or any sequence of ints) as a plain tuple.

    TensorRT reports an invalid shape as ``Dims`` of rank -1, whose ``len()`` Python refuses
    (``ValueError``). Such a shape raises RuntimeError naming ``what`` instead of becoming ``()``,
    which would read as a scalar.
    """
    try:
        rank = len(value)
    except (ValueError, OverflowError):
        rank = -1
    if rank < 0:
        raise RuntimeError(
            f"TensorRT reported no valid shape for {what} (rank -1): its shape cannot be "
            "computed from the shapes that are set"
        )
    return tuple(int(value[index]) for index in range(rank))


def shape_inference_error(insufficient: Sequence[str], failure: str | None) -> RuntimeError | None:
    """The error for a failed shape inference after input shapes were set, or None.

    ``insufficient`` are the tensors TensorRT's ``infer_shapes`` names as not specified enough;
    ``failure`` is its reason when shape inference itself failed (input shapes that contradict
    each other, such as different lengths into an elementwise sum).
    """
    if failure is not None:
        return RuntimeError(f"TensorRT shape inference rejected the input shapes: {failure}")
    if insufficient:
        listed = ", ".join(repr(n) for n in insufficient)
        return RuntimeError(f"TensorRT shape inference reports tensors not specified: {listed}")
    return None


def capture_problem(
    capturable: bool, specialization: str | None, ranged: Sequence[str]
) -> str | None:
    """Why TensorRT-RTX cannot record an enqueue in a CUDA graph, or None when it can.

    ``capturable`` is the context's ``is_stream_capturable(stream)``; ``specialization`` the
    name of its ``dynamic_shapes_kernel_specialization_strategy``; ``ranged`` the unit's ranged
    inputs. With LAZY specialization and ranged inputs, RTX replaces its fallback kernels by
    shape-specialized ones in the background, which a recorded graph would not follow.
    """
    if not capturable:
        return (
            "TensorRT-RTX reports that this execution context cannot be captured on this stream "
            "(capture needs an engine built with BuilderFlag.REQUIRE_USER_ALLOCATION and a "
            "network without data-dependent shapes or on-device control flow)"
        )
    if specialization == "LAZY" and ranged:
        listed = ", ".join(repr(n) for n in ranged)
        return (
            "TensorRT-RTX specializes kernels lazily for the ranged inputs "
            f"{listed}: a captured graph would keep the fallback kernels"
        )
    return None


def shape_outputs(tensors: Iterable[IOTensor]) -> tuple[str, ...]:
    """The outputs TensorRT computes during shape inference (shape tensors), in engine order."""
    return tuple(t.name for t in tensors if t.mode == "OUTPUT" and t.is_shape_io)


def reject_stream(stream: object) -> None:
    """Raises the error for a ``stream`` that is not a nonnegative int (bool is not an int)."""
    if type(stream) is not int:
        raise ValueError(
            f"stream must be a nonnegative int CUDA stream handle, got {stream!r} "
            f"({type(stream).__name__})"
        )
    raise ValueError(f"stream must be a nonnegative int CUDA stream handle, got {stream}")


@dataclass(frozen=True)
class IOTensor:
    """One IO tensor as the engine reports it.

    ``shape`` is the build-time shape (``-1`` where set at run time); ``profile`` is profile 0's
    (min, opt, max) and is needed only for inputs with a ``-1`` dimension. ``mode``,
    ``location`` and ``format`` are the TensorRT enum names (``"INPUT"``/``"OUTPUT"``,
    ``"DEVICE"``/``"HOST"``, ``"LINEAR"``/``"CHW32"``/...). ``is_shape_io`` is TensorRT's
    ``is_shape_inference_io`` (a shape-tensor input or output); ``aliased_input`` names the
    input an output shares its memory with (``get_aliased_input_tensor``), else None.
    """

    name: str
    mode: str
    shape: Shape
    location: str = "DEVICE"
    is_shape_io: bool = False
    profile: Profile | None = None
    format: str = LINEAR
    aliased_input: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"IOTensor.name must be a non-empty string, got {self.name!r}")
        if self.mode not in _MODES:
            raise ValueError(
                f"IOTensor {self.name!r}: mode must be INPUT or OUTPUT, not {self.mode!r}"
            )
        object.__setattr__(self, "shape", tuple(self.shape))
        if self.profile is not None:
            low, optimum, high = (tuple(s) for s in self.profile)
            object.__setattr__(self, "profile", (low, optimum, high))
        if self.aliased_input is not None and self.mode != "OUTPUT":
            raise ValueError(
                f"IOTensor {self.name!r}: only outputs alias an input, not a {self.mode} tensor"
            )
        if self.mode == "INPUT" and -1 in self.shape and self.profile is None:
            raise ValueError(
                f"IOTensor {self.name!r}: input shape {self.shape} has run-time dimensions "
                "but no profile"
            )

    @property
    def creation_shape(self) -> Shape:
        """The shape a unit sets for this input when created: fixed, single point, or optimum."""
        if -1 not in self.shape or self.profile is None:
            return self.shape
        low, optimum, high = self.profile
        return low if low == high else optimum

    @property
    def ranged(self) -> bool:
        """True for inputs whose shape set_input_shapes takes (profile minimum differs from max)."""
        if self.mode != "INPUT" or -1 not in self.shape or self.profile is None:
            return False
        low, _, high = self.profile
        return low != high


class IOTable:
    """The IO tensors of an engine an execution unit can run, with the unit's argument checks.

    Creation raises ValueError naming every HOST-location tensor, shape-tensor input and tensor
    whose format is not LINEAR. Names are kept in the engine's order, inputs first, as
    precomputed tuples for the enqueue path.
    """

    def __init__(self, tensors: Iterable[IOTensor]) -> None:
        described = tuple(tensors)
        by_name: dict[str, IOTensor] = {}
        problems = []
        for tensor in described:
            if tensor.name in by_name:
                raise ValueError(f"the engine lists the tensor name {tensor.name!r} twice")
            by_name[tensor.name] = tensor
            if tensor.location == "HOST":
                problems.append(f"{tensor.name!r} is a HOST-location tensor")
            if tensor.mode == "INPUT" and tensor.is_shape_io:
                problems.append(f"input {tensor.name!r} is a shape tensor (its values set shapes)")
            if tensor.format != LINEAR:
                problems.append(
                    f"{tensor.name!r} has the IO format {tensor.format} (only LINEAR buffers, "
                    "row-major and unpadded, can be sized from the tensor shape)"
                )
        for tensor in described:
            source = tensor.aliased_input
            if source is not None and getattr(by_name.get(source), "mode", None) != "INPUT":
                problems.append(f"output {tensor.name!r} aliases {source!r}, not an input")
        if problems:
            raise ValueError(
                "the engine cannot be run by an execution unit: " + "; ".join(problems)
            )
        self.tensors: Mapping[str, IOTensor] = by_name
        self.inputs: tuple[str, ...] = tuple(t.name for t in described if t.mode == "INPUT")
        self.outputs: tuple[str, ...] = tuple(t.name for t in described if t.mode == "OUTPUT")
        self.names: tuple[str, ...] = (*self.inputs, *self.outputs)
        self.ranged: tuple[str, ...] = tuple(n for n in self.inputs if by_name[n].ranged)
        # (output, input) pairs that TensorRT requires to share one address.
        self.aliases: tuple[tuple[str, str], ...] = tuple(
            (n, source) for n in self.outputs if (source := by_name[n].aliased_input) is not None
        )
        self.shape_outputs: tuple[str, ...] = shape_outputs(described)
        self._count = len(self.names)
        self._known = frozenset(self.names)
        ranged = ", ".join(repr(n) for n in self.ranged)
        self.not_shaped_reason = (
            f"input shapes are not set: call set_input_shapes with every ranged input ({ranged})"
        )
        self.incomplete_reason = (
            "input shapes are incomplete after a failed set_input_shapes call: "
            f"call set_input_shapes again with every ranged input ({ranged})"
        )

    # ---- creation --------------------------------------------------------------------------

    @property
    def creation_shapes(self) -> dict[str, Shape]:
        """Every input's shape to set when a unit is created (ranged inputs at their optimum)."""
        return {name: self.tensors[name].creation_shape for name in self.inputs}

    @property
    def blocked_at_creation(self) -> str | None:
        """Why a new unit refuses shape queries and enqueue (None when nothing is ranged)."""
        return self.not_shaped_reason if self.ranged else None

    def check_output_shapes(self, shapes: Mapping[str, Sequence[int]]) -> None:
        """Raises ValueError for outputs still ``-1`` with every input shape set at creation.

        Such a dimension depends on tensor values, not on input dimensions: execution units
        cannot allocate for it.
        """
        dependent = {n: tuple(shapes[n]) for n in self.outputs if -1 in tuple(shapes[n])}
        if dependent:
            listed = ", ".join(f"{n!r} {s}" for n, s in dependent.items())
            raise ValueError(
                f"outputs with data-dependent sizes are not supported by execution units: {listed}"
            )

    def unresolved_output_error(
        self, shapes: Mapping[str, Sequence[int] | None]
    ) -> RuntimeError | None:
        """The error for outputs left unresolved once set_input_shapes set every input, or None.

        ``shapes`` maps each output to the shape TensorRT reports for it after shape inference,
        or to None where TensorRT reports no valid shape (rank -1). An output with a ``-1``
        dimension, with no valid shape, or missing from ``shapes`` is unresolved: no buffer can
        be sized for it, so the unit refuses enqueue until a later call resolves every output.
        """
        unresolved = []
        for name in self.outputs:
            shape = shapes.get(name)
            if shape is None:
                unresolved.append(f"{name!r} (TensorRT reports no valid shape)")
            elif -1 in tuple(shape):
                unresolved.append(f"{name!r} {tuple(shape)}")
        if not unresolved:
            return None
        subject = "the shape of output" if len(unresolved) == 1 else "the shapes of outputs"
        verb = "is" if len(unresolved) == 1 else "are"
        return RuntimeError(
            f"after set_input_shapes, {subject} {', '.join(unresolved)} {verb} still unresolved: "
            "not computable from the input shapes that are set; enqueue and shape queries are "
            "refused until set_input_shapes resolves every output"
        )

    # ---- names and shapes ------------------------------------------------------------------

    def check_name(self, name: object) -> None:
        """Raises ValueError unless ``name`` is one of the engine's inputs or outputs."""
        if name not in self._known:
            known = ", ".join(repr(n) for n in self.names)
            raise ValueError(f"unknown tensor name {name!r}; the engine has {known}")

    def profile_range(self, name: str) -> str:
        """Profile 0's allowed shapes of an input, as ``(min) to (max)``."""
        tensor = self.tensors[name]
        if tensor.profile is None:
            return f"{tensor.shape} to {tensor.shape}"
        low, _, high = tensor.profile
        return f"{low} to {high}"

    def check_shapes(self, shapes: object) -> dict[str, Shape]:
        """Validates a set_input_shapes argument: every ranged input, each with its rank and
        nonnegative int dimensions. Returns the shapes as tuples in the engine's order."""
        if not isinstance(shapes, Mapping):
            raise ValueError(
                f"shapes must be a mapping of input name to shape, got {type(shapes).__name__}"
            )
        problems = []
        for name in shapes:
            if name in self.ranged:
                continue
            if name in self.inputs:
                problems.append(
                    f"{name!r} is not a ranged input (its shape is fixed by the engine profile)"
                )
            else:
                problems.append(f"{name!r} (given {shapes[name]!r}) is not an input of the engine")
        missing = [n for n in self.ranged if n not in shapes]
        if missing:
            problems.append("missing ranged inputs " + ", ".join(repr(n) for n in missing))
        checked: dict[str, Shape] = {}
        for name in self.ranged:
            if name not in shapes:
                continue
            value = shapes[name]
            try:
                dims = tuple(value)
            except TypeError:
                problems.append(f"{name!r}: shape {value!r} is not a sequence of ints")
                continue
            rank = len(self.tensors[name].shape)
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
            profile = self.tensors[name].profile
            if profile is not None and not all(
                low <= dim <= high
                for low, dim, high in zip(profile[0], dims, profile[2], strict=True)
            ):
                problems.append(
                    f"{name!r}: shape {dims} is outside profile 0, which allows "
                    f"{self.profile_range(name)}"
                )
                continue
            checked[name] = dims
        if problems:
            raise ValueError("invalid input shapes: " + "; ".join(problems))
        return checked

    def rejection_error(self, rejected: Iterable[tuple[str, Shape, str]]) -> RuntimeError:
        """The error for shapes TensorRT refused: (input name, shape, TensorRT's reason) each."""
        described = [
            f"{name!r} {dims} (profile 0 allows {self.profile_range(name)}): {reason}"
            for name, dims, reason in rejected
        ]
        return RuntimeError(
            "TensorRT rejected the shape of "
            + "; ".join(described)
            + "; input shapes stay incomplete until set_input_shapes succeeds"
        )

    # ---- enqueue ---------------------------------------------------------------------------

    def check_enqueue(self, addresses: Any, stream: Any) -> None:
        """Raises unless ``stream`` is a nonnegative int and ``addresses`` maps exactly every
        input and output to a positive int (bool is refused) aligned to 256 bytes, with each
        aliased output at its input's address. Cheap when both are valid."""
        try:
            if len(addresses) != self._count:
                raise KeyError
            for name in self.names:
                address = addresses[name]
                if type(address) is not int or address <= 0 or address % ADDRESS_ALIGNMENT:
                    raise KeyError
            for output, source in self.aliases:
                if addresses[output] != addresses[source]:
                    raise KeyError
        except (KeyError, TypeError):
            self.reject_addresses(addresses)
            raise
        if type(stream) is not int or stream < 0:
            reject_stream(stream)

    def reject_addresses(self, addresses: Any) -> None:
        """Raises the error that names what is wrong with an addresses argument."""
        if not isinstance(addresses, Mapping):
            raise ValueError(
                f"addresses must map tensor names to device addresses, "
                f"got {type(addresses).__name__}"
            )
        problems = []
        missing = [n for n in self.names if n not in addresses]
        if missing:
            problems.append("missing addresses for " + ", ".join(repr(n) for n in missing))
        extra = [n for n in addresses if n not in self._known]
        if extra:
            problems.append("unknown tensor names " + ", ".join(repr(n) for n in extra))
        wrong_type = []
        for name in self.names:
            if name not in addresses:
                continue
            value = addresses[name]
            if type(value) is not int:
                wrong_type.append(f"{name!r}: {value!r} ({type(value).__name__})")
            elif value <= 0:
                problems.append(f"{name!r}: address {value} is not positive")
            elif value % ADDRESS_ALIGNMENT:
                problems.append(
                    f"{name!r}: address {value:#x} is not a multiple of {ADDRESS_ALIGNMENT} "
                    f"(TensorRT needs {ADDRESS_ALIGNMENT}-byte aligned tensors)"
                )
        if wrong_type:
            raise ValueError("device addresses must be positive ints; got " + "; ".join(wrong_type))
        for output, source in self.aliases:
            if output in addresses and source in addresses:
                shared, given = addresses[source], addresses[output]
                if shared != given:
                    problems.append(
                        f"output {output!r} is written in place of input {source!r}: its address "
                        f"must be {_hex(shared)}, got {_hex(given)}"
                    )
        raise ValueError("invalid tensor addresses: " + "; ".join(problems))


def _hex(value: object) -> str:
    return f"{value:#x}" if type(value) is int else repr(value)
