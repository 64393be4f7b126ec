"""What a build declares besides the graph: input shapes (profiles) and builder settings."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tensoracle.engine.field_checks import check_int64, check_text

Shape = tuple[int, ...]

# The range every supported backend accepts for builder_optimization_level.
OPTIMIZATION_LEVELS = range(0, 6)
# A build target: a compute capability written smXY (sm80, sm120), or "current" alone.
_TARGET = re.compile(r"sm[1-9][0-9]{1,2}")
CURRENT_TARGET = "current"
# BuilderSettings.hardware_compatibility (TensorRT 11's HardwareCompatibilityLevel): None, or
# an engine for every GPU from Ampere on, or for every GPU of the build GPU's compute capability.
AMPERE_PLUS = "ampere_plus"
SAME_COMPUTE_CAPABILITY = "same_compute_capability"
HARDWARE_COMPATIBILITY_LEVELS = (AMPERE_PLUS, SAME_COMPUTE_CAPABILITY)


def _shape(field_name: str, value: Any) -> Shape:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ValueError(f"{field_name} must be a sequence of positive integers, not {value!r}")
    dims = tuple(value)
    for dim in dims:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
            raise ValueError(f"{field_name} must hold positive integers; {value!r} holds {dim!r}")
        check_int64(field_name, dim)
    return dims


@dataclass(frozen=True)
class InputShape:
    """The minimum, optimum and maximum shape of one input (one optimization profile)."""

    minimum: Shape
    optimum: Shape
    maximum: Shape

    def __post_init__(self) -> None:
        minimum = _shape("InputShape.minimum", self.minimum)
        optimum = _shape("InputShape.optimum", self.optimum)
        maximum = _shape("InputShape.maximum", self.maximum)
        if not minimum:
            raise ValueError("InputShape.minimum is empty; an input has at least one dimension")
        if not len(minimum) == len(optimum) == len(maximum):
            raise ValueError(
                "InputShape.minimum, optimum and maximum must have the same rank; got "
                f"minimum={minimum}, optimum={optimum}, maximum={maximum}"
            )
        for axis, (low, mid, high) in enumerate(zip(minimum, optimum, maximum, strict=True)):
            if not low <= mid <= high:
                raise ValueError(
                    "InputShape needs minimum <= optimum <= maximum in every dimension; "
                    f"dimension {axis} has minimum={low}, optimum={mid}, maximum={high}"
                )
        object.__setattr__(self, "minimum", minimum)
        object.__setattr__(self, "optimum", optimum)
        object.__setattr__(self, "maximum", maximum)

    @classmethod
    def fixed(cls, shape: Iterable[int]) -> InputShape:
        """One size: minimum, optimum and maximum are all ``shape``."""
        dims = _shape("InputShape.fixed shape", shape)
        return cls(dims, dims, dims)

    @classmethod
    def ranged(
        cls, minimum: Iterable[int], optimum: Iterable[int], maximum: Iterable[int]
    ) -> InputShape:
        """A range of sizes; put ``-1`` in each varying dimension of the graph input."""
        return cls(minimum, optimum, maximum)  # type: ignore[arg-type]  # validated, converted

    @property
    def is_fixed(self) -> bool:
        return self.minimum == self.optimum == self.maximum

    def conditions(self) -> dict[str, list[int]]:
        """The profile as the saved header records it (keys ``min``, ``opt``, ``max``)."""
        return {"min": list(self.minimum), "opt": list(self.optimum), "max": list(self.maximum)}


def sorted_targets(targets: Iterable[str]) -> list[str]:
    """Targets in the one order every identity records them: by compute capability, lowest first
    (``sm86, sm89, sm120``; not by text, which would put sm120 first). The same set declared in
    any order thus names the same saved engine. TensorRT-RTX's default set is already in this
    order, so entries built for it keep their identity."""
    # "sm" and digits without a leading zero: a shorter name is a lower capability.
    return sorted(targets, key=lambda target: (len(target), target))


def _targets(value: Any) -> tuple[str, ...] | None:
    """Checks BuilderSettings.targets: None, or smXY names (lower case, no repeats), or current;
    returns them sorted (``sorted_targets``)."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ValueError(
            "BuilderSettings.targets must be a sequence of compute capabilities such as "
            f"('sm89', 'sm120'), ('current',) or None, not {value!r}"
        )
    entries = tuple(value)
    if not entries:
        raise ValueError(
            "BuilderSettings.targets is empty; name at least one target, or pass None to use "
            "the backend's default"
        )
    for entry in entries:
        if not isinstance(entry, str) or not (_TARGET.fullmatch(entry) or entry == CURRENT_TARGET):
            raise ValueError(
                f"BuilderSettings.targets holds {entry!r}; write each target as 'smXY' in lower "
                f"case (for example 'sm89'), or give {CURRENT_TARGET!r} alone"
            )
    if CURRENT_TARGET in entries and len(entries) > 1:
        raise ValueError(
            f"BuilderSettings.targets={entries!r}: {CURRENT_TARGET!r} (the local GPU) must be "
            "the only entry"
        )
    repeated = sorted({entry for entry in entries if entries.count(entry) > 1})
    if repeated:
        raise ValueError(
            f"BuilderSettings.targets={entries!r} names {', '.join(map(repr, repeated))} twice; "
            "name each target once"
        )
    return tuple(sorted_targets(entries))


@dataclass(frozen=True)
class BuilderSettings:
    """Builder settings. TF32 is always disabled; the workspace limit is in bytes or None.

    ``targets`` are the compute capabilities the plan is built for (``("sm89", "sm120")``, or
    ``("current",)`` for the local GPU), a set: kept sorted by compute capability, so the same
    targets in any order give the same engine identity. None keeps the backend's default: for
    TensorRT-RTX the ``TENSORACLE_RTX_TARGETS`` environment variable, else sm80, sm86, sm89 and
    sm120; TensorRT 11 always builds for the local GPU.

    ``hardware_compatibility`` (TensorRT 11 only) lets an engine built on one GPU run on others:
    ``"ampere_plus"`` on every GPU from sm80 on, ``"same_compute_capability"`` on every GPU of the
    build GPU's compute capability; None (the default) only on GPUs like the one it was built on.
    TensorRT-RTX engines run on every GPU of their ``targets`` and take no level.
    """

    workspace_limit: int | None = None
    optimization_level: int = 3
    tf32: bool = False
    targets: tuple[str, ...] | None = None
    hardware_compatibility: str | None = None

    def __post_init__(self) -> None:
        limit = self.workspace_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ValueError(
                f"BuilderSettings.workspace_limit must be a positive integer number of bytes or "
                f"None, not {limit!r}"
            )
        if limit is not None and limit <= 0:
            raise ValueError(
                f"BuilderSettings.workspace_limit must be positive (bytes) or None, not {limit}"
            )
        if limit is not None:
            check_int64("BuilderSettings.workspace_limit", limit)
        level = self.optimization_level
        if (
            isinstance(level, bool)
            or not isinstance(level, int)
            or level not in OPTIMIZATION_LEVELS
        ):
            raise ValueError(
                "BuilderSettings.optimization_level must be an integer from "
                f"{OPTIMIZATION_LEVELS.start} to {OPTIMIZATION_LEVELS.stop - 1}, not {level!r}"
            )
        if self.tf32:
            raise ValueError(
                f"BuilderSettings.tf32 must be False (TF32 is always disabled), not {self.tf32!r}"
            )
        object.__setattr__(self, "targets", _targets(self.targets))
        compatibility = self.hardware_compatibility
        if compatibility is not None and compatibility not in HARDWARE_COMPATIBILITY_LEVELS:
            raise ValueError(
                "BuilderSettings.hardware_compatibility must be None, "
                + " or ".join(repr(known) for known in HARDWARE_COMPATIBILITY_LEVELS)
                + f", not {compatibility!r}"
            )
        if compatibility is not None and self.targets not in (None, (CURRENT_TARGET,)):
            raise ValueError(
                f"BuilderSettings(hardware_compatibility={compatibility!r}, "
                f"targets={self.targets!r}): a hardware compatibility level builds on the local "
                "GPU for the GPUs the level names; leave targets None (or ('current',))"
            )


@dataclass(frozen=True)
class EngineBuild:
    """The build declaration: one ``InputShape`` per graph input, and the builder settings."""

    inputs: Mapping[str, InputShape]
    settings: BuilderSettings = field(default_factory=BuilderSettings)

    def __post_init__(self) -> None:
        if not isinstance(self.inputs, Mapping):
            raise ValueError(
                f"EngineBuild.inputs must map input names to InputShape, not {self.inputs!r}"
            )
        copied: dict[str, InputShape] = {}
        for name, shape in self.inputs.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"EngineBuild.inputs has an invalid input name {name!r}")
            check_text("EngineBuild.inputs name", name)
            if not isinstance(shape, InputShape):
                raise ValueError(
                    f"EngineBuild.inputs[{name!r}] must be an InputShape, not {shape!r}"
                )
            copied[name] = shape
        if not isinstance(self.settings, BuilderSettings):
            raise ValueError(
                f"EngineBuild.settings must be a BuilderSettings, not {self.settings!r}"
            )
        # A plain dict (a copy): declarations pickle and deep-copy, as in tensoracle 1.x.
        object.__setattr__(self, "inputs", copied)
