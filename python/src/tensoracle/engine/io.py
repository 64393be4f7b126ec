"""Declared engine inputs and outputs (``EngineIO``), and their check against an engine's IO.

An IO signature is the JSON-ready description of an engine's IO tensors: for each tensor its
name, mode, dtype, build-time shape, profile (inputs), location and format, enum values by name.
It is recorded in the saved header at build time (from the network and the declaration), so the
declared ``EngineIO`` can be checked without deserializing, and it is read again from the engine
itself wherever the engine is deserialized.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tensoracle import _core
from tensoracle.engine.declaration import EngineBuild
from tensoracle.engine.field_checks import check_int64, check_text
from tensoracle.errors import EngineIOError, with_refusal

Signature = dict[str, Any]


def _enum_name(field_name: str, value: Any, kind: str) -> str:
    if type(value).__name__ != kind or not isinstance(getattr(value, "name", None), str):
        raise ValueError(
            f"{field_name} must be a TensorRT {kind} (such as trt.{kind}), not {value!r}"
        )
    return str(value.name)


@dataclass(frozen=True)
class TensorSpec:
    """One declared tensor: TensorRT dtype and build-time shape (``-1`` for ranged dimensions);
    ``location`` and ``format`` are checked only when given."""

    dtype: Any
    shape: tuple[int, ...]
    location: Any = None
    format: Any = None

    def __post_init__(self) -> None:
        _enum_name("TensorSpec.dtype", self.dtype, "DataType")
        if isinstance(self.shape, str | bytes) or not isinstance(self.shape, Iterable):
            raise ValueError(f"TensorSpec.shape must be a sequence of integers, not {self.shape!r}")
        dims = tuple(self.shape)
        for dim in dims:
            if isinstance(dim, bool) or not isinstance(dim, int) or dim < -1:
                raise ValueError(
                    f"TensorSpec.shape must hold integers >= -1; {self.shape!r} holds {dim!r}"
                )
            check_int64("TensorSpec.shape", dim)
        object.__setattr__(self, "shape", dims)
        if self.location is not None:
            _enum_name("TensorSpec.location", self.location, "TensorLocation")
        if self.format is not None:
            _enum_name("TensorSpec.format", self.format, "TensorFormat")


@dataclass(frozen=True)
class EngineIO:
    """The expected input and output tensors of an engine, by name."""

    inputs: Mapping[str, TensorSpec]
    outputs: Mapping[str, TensorSpec]

    def __post_init__(self) -> None:
        for field_name in ("inputs", "outputs"):
            value = getattr(self, field_name)
            if not isinstance(value, Mapping):
                raise ValueError(
                    f"EngineIO.{field_name} must map names to TensorSpec, not {value!r}"
                )
            for name, spec in value.items():
                if not isinstance(name, str) or not name:
                    raise ValueError(f"EngineIO.{field_name} has an invalid tensor name {name!r}")
                check_text(f"EngineIO.{field_name} name", name)
                if not isinstance(spec, TensorSpec):
                    raise ValueError(
                        f"EngineIO.{field_name}[{name!r}] must be a TensorSpec, not {spec!r}"
                    )
            # A plain dict (a copy): it pickles and deep-copies, as in tensoracle 1.x.
            object.__setattr__(self, field_name, dict(value))
        both = sorted(set(self.inputs) & set(self.outputs))
        if both:
            raise ValueError(f"EngineIO names {both[0]!r} both as an input and as an output")


def _format_name(trt: Any, allowed: int) -> str:
    """The IO format a network tensor allows: LINEAR when permitted (TensorRT's default)."""
    members = trt.TensorFormat.__members__
    if allowed & (1 << int(members["LINEAR"])):
        return "LINEAR"
    for name, value in members.items():
        if allowed & (1 << int(value)):
            return str(name)
    return "LINEAR"


def signature_from_network(trt: Any, network: Any, declaration: EngineBuild) -> Signature:
    """The IO signature of a built network, with input profiles taken from the declaration."""
    tensors: list[dict[str, Any]] = []
    for mode, count, get in (
        ("INPUT", network.num_inputs, network.get_input),
        ("OUTPUT", network.num_outputs, network.get_output),
    ):
        for index in range(count):
            tensor = get(index)
            location = getattr(tensor, "location", None)
            entry: dict[str, Any] = {
                "name": tensor.name,
                "mode": mode,
                "dtype": tensor.dtype.name,
                "shape": [int(dim) for dim in tensor.shape],
                "location": location.name if location is not None else "DEVICE",
                "format": _format_name(trt, int(tensor.allowed_formats)),
            }
            if mode == "INPUT":
                entry["profile"] = declaration.inputs[tensor.name].conditions()
            tensors.append(entry)
    return {"tensors": tensors}


def signature_from_engine(trt: Any, engine: Any) -> Signature:
    """The IO signature read back from a deserialized engine (profile 0 for inputs)."""
    tensors: list[dict[str, Any]] = []
    for index in range(engine.num_io_tensors):
        name = engine.get_tensor_name(index)
        mode = engine.get_tensor_mode(name)
        entry: dict[str, Any] = {
            "name": name,
            "mode": mode.name,
            "dtype": engine.get_tensor_dtype(name).name,
            "shape": [int(dim) for dim in engine.get_tensor_shape(name)],
            "location": engine.get_tensor_location(name).name,
            "format": engine.get_tensor_format(name).name,
        }
        if mode == trt.TensorIOMode.INPUT:
            low, mid, high = engine.get_tensor_profile_shape(name, 0)
            entry["profile"] = {
                "min": [int(dim) for dim in low],
                "opt": [int(dim) for dim in mid],
                "max": [int(dim) for dim in high],
            }
        tensors.append(entry)
    return {"tensors": tensors}


def _mismatch(
    path: str, source: str, tensor: str, field: str, observed: Any, expected: Any, at: str
) -> None:
    """The 1.x refusal; ``at`` is the refusal's field (where in the IO, as the core names it)."""
    raise with_refusal(
        EngineIOError(
            f"engine IO mismatch in {source} '{path}': tensor {tensor!r} field {field!r}: "
            f"observed={observed}, expected={expected}, path={path}"
        ),
        path=path,
        field=at,
        observed=str(observed),
        expected=str(expected),
    )


Profile = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _profile(value: Any) -> Profile | None:
    """A recorded profile ``{"min", "opt", "max"}`` as (minimum, optimum, maximum)."""
    if not isinstance(value, Mapping):
        return None
    return (tuple(value.get("min", ())), tuple(value.get("opt", ())), tuple(value.get("max", ())))


def described(
    signature: Mapping[str, Any], *, default_location: str = "", default_format: str = ""
) -> list[_core.TensorDescription]:
    """The tensors of an IO signature as the core's comparison takes them (first_io_difference);
    the defaults stand where a tensor records no location or format."""
    tensors: list[_core.TensorDescription] = []
    for entry in signature.get("tensors", []):
        tensors.append(
            _core.TensorDescription(
                name=entry["name"],
                is_input=entry["mode"] == "INPUT",
                dtype=entry["dtype"],
                shape=list(entry["shape"]),
                location=entry.get("location") or default_location,
                format=entry.get("format") or default_format,
                profile=_profile(entry.get("profile")),
            )
        )
    return tensors


def _declared(
    io: EngineIO, declaration: EngineBuild
) -> tuple[dict[str, tuple[str, TensorSpec]], list[_core.TensorDescription]]:
    """The declared tensors by name (mode, spec), and as the core's comparison takes them: the
    inputs, then the outputs; each build input's profile range (its shape thrice when fixed)."""
    declared: dict[str, tuple[str, TensorSpec]] = {}
    declared.update({name: ("INPUT", spec) for name, spec in io.inputs.items()})
    declared.update({name: ("OUTPUT", spec) for name, spec in io.outputs.items()})
    tensors = [
        _core.TensorDescription(
            name=name,
            is_input=mode == "INPUT",
            dtype=spec.dtype.name,
            shape=list(spec.shape),
            location="" if spec.location is None else spec.location.name,
            format="" if spec.format is None else spec.format.name,
            profile=_profile_range(name, spec, declaration) if mode == "INPUT" else None,
        )
        for name, (mode, spec) in declared.items()
    ]
    return declared, tensors


def _profile_range(name: str, spec: TensorSpec, declaration: EngineBuild) -> Profile | None:
    shape = declaration.inputs.get(name)
    if shape is None:
        return None
    if -1 not in spec.shape:
        return (spec.shape, spec.shape, spec.shape)
    return (shape.minimum, shape.optimum, shape.maximum)


def check_io(
    io: EngineIO, declaration: EngineBuild, signature: Mapping[str, Any], path: str, source: str
) -> None:
    """Raises EngineIOError naming tensor, field, observed and expected values and the path when
    ``signature`` (from the saved header or the engine: ``source`` says which) differs from
    ``io`` and the declared input profiles. The core compares (first_io_difference), in
    tensoracle 1.x's order: names; for each declared input, then output, its mode, dtype and
    shape, then location and format where declared; the build inputs against the declared inputs
    (checked here); each build input's profile range."""
    observed = {entry["name"]: entry for entry in signature.get("tensors", [])}
    declared, expected = _declared(io, declaration)
    difference = _core.first_io_difference(
        described(signature), expected, placement_where_stated=True, profiles_last=True
    )
    name = "" if difference is None else difference.tensor
    at = "" if difference is None else _core.io_field(difference, expected)
    if difference is not None and difference.field == "name":
        if name in declared:
            _mismatch(
                path,
                source,
                name,
                "name",
                f"no such tensor (engine has {sorted(observed)})",
                repr(name),
                at,
            )
        _mismatch(
            path,
            source,
            name,
            "name",
            repr(name),
            f"only the declared tensors {sorted(declared)}",
            at,
        )
    if difference is not None and difference.field != "profile":
        entry = observed[name]
        mode, spec = declared[name]
        wanted: Any = {
            "mode": mode,
            "dtype": spec.dtype.name,
            "shape": spec.shape,
            "location": getattr(spec.location, "name", None),
            "format": getattr(spec.format, "name", None),
        }[difference.field]
        seen = tuple(entry["shape"]) if difference.field == "shape" else entry.get(difference.field)
        _mismatch(path, source, name, difference.field, seen, wanted, at)
    for build_input in sorted(set(declaration.inputs) ^ set(io.inputs)):
        side = "declaration.inputs" if build_input in declaration.inputs else "io.inputs"
        _mismatch(
            path,
            source,
            build_input,
            "name (build input)",
            f"only in {side}",
            "in both",
            f'{side}["{build_input}"]',
        )
    if difference is not None:
        _mismatch(
            path,
            source,
            name,
            "profile range",
            _profile(observed[name].get("profile")),
            _profile_range(name, io.inputs[name], declaration),
            at,
        )
