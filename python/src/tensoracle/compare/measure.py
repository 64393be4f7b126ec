"""Comparison of a candidate output array against a reference array.

Floating point arrays get float64 error measures; integer and boolean arrays get exact mismatch
counts. The arithmetic runs in the C++ core (``tensoracle._core``) with the GIL released.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from tensoracle import _core
from tensoracle.compare.plot import error_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Kind = Literal["floating", "integer", "boolean"]

# dtype names the core reads, by kind. bfloat16 and the fp8 types come from ml_dtypes.
_FLOATING = ("float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2")
# Other narrow ml_dtypes floats are widened to float32 (exactly) in a copy before comparing;
# long double is narrowed to float64, the precision every measure is computed in anyway.
_WIDENED = {
    "float8_e4m3fnuz": "float32",
    "float8_e5m2fnuz": "float32",
    "float8_e4m3b11fnuz": "float32",
    "float8_e4m3": "float32",
    "float8_e3m4": "float32",
    "float8_e8m0fnu": "float32",
    "float6_e2m3fn": "float32",
    "float6_e3m2fn": "float32",
    "float4_e2m1fn": "float32",
    "float96": "float64",
    "float128": "float64",
}
_INTEGER = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_KIND_TEXT: dict[Kind, str] = {
    "floating": "floating point",
    "integer": "integer",
    "boolean": "boolean",
}
_PERCENTILES = (50.0, 90.0, 99.0, 99.9)


@dataclasses.dataclass(frozen=True)
class ErrorStatistics:
    """Distribution of ``abs(candidate - reference)``, from ``compare_outputs(statistics=True)``.

    Percentiles interpolate linearly between order statistics (NumPy's default method).
    ``histogram_counts[i]`` counts errors in ``[histogram_edges[i], histogram_edges[i + 1])``;
    the last bin includes its upper edge. The edges run from 0 to the maximum absolute error, or
    from 0 to 1 when every error is 0.
    """

    mean_absolute_error: float
    p50: float
    p90: float
    p99: float
    p999: float
    histogram_edges: tuple[float, ...]
    histogram_counts: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class OutputComparison:
    """Measurements of a candidate array against a reference array.

    For floating point arrays (``kind == "floating"``): the non-finite count of each side, and,
    when both sides are entirely finite, ``max_absolute_error``, ``relative_l2_error``
    (difference norm over reference norm; None for a zero reference norm) and
    ``cosine_similarity`` (None when either norm is zero). ``outside_tolerance_count`` and
    ``outside_tolerance_fraction`` are set only when both ``atol`` and ``rtol`` were given.
    ``mismatch_count`` and ``mismatch_fraction`` are None.

    For integer and boolean arrays: ``mismatch_count`` and ``mismatch_fraction`` count elements
    that are not exactly equal; the non-finite counts are 0 and the floating point measures None.

    The first nine fields are tensoracle 1.x's, in its order; ``kind``, ``element_count``, the
    tolerances used and the error ``statistics`` follow.
    """

    candidate_nonfinite_count: int
    reference_nonfinite_count: int
    max_absolute_error: float | None = None
    relative_l2_error: float | None = None
    cosine_similarity: float | None = None
    outside_tolerance_count: int | None = None
    outside_tolerance_fraction: float | None = None
    mismatch_count: int | None = None
    mismatch_fraction: float | None = None
    kind: Kind = "floating"
    element_count: int = 0
    atol: float | None = None
    rtol: float | None = None
    statistics: ErrorStatistics | None = None

    def summary(self) -> str:
        """One line for logs and notebooks.

        For example ``floating point, 1024 elements: max_absolute_error=0.00195 ...`` or
        ``integer, 8 elements: mismatch_count=1 (12.5%)``.
        """
        head = f"{_KIND_TEXT[self.kind]}, {self.element_count} elements"
        if self.kind != "floating":
            return (
                f"{head}: mismatch_count={self.mismatch_count} ({_percent(self.mismatch_fraction)})"
            )
        if self.candidate_nonfinite_count or self.reference_nonfinite_count:
            return (
                f"{head}: non-finite values (candidate {self.candidate_nonfinite_count}, "
                f"reference {self.reference_nonfinite_count}); no measures"
            )
        parts = [
            f"max_absolute_error={_number(self.max_absolute_error)}",
            f"relative_l2_error={_number(self.relative_l2_error)}",
            f"cosine_similarity={_number(self.cosine_similarity)}",
        ]
        if self.outside_tolerance_count is not None:
            parts.append(
                f"outside_tolerance={self.outside_tolerance_count} "
                f"({_percent(self.outside_tolerance_fraction)}) "
                f"at atol={self.atol:g} rtol={self.rtol:g}"
            )
        if self.statistics is not None:
            parts.append(
                f"mean_absolute_error={_number(self.statistics.mean_absolute_error)} "
                f"p99={_number(self.statistics.p99)}"
            )
        return f"{head}: " + " ".join(parts)

    def __str__(self) -> str:
        return self.summary()

    def plot(self, title: str | None = None) -> Figure:
        """A matplotlib ``Figure`` of the absolute error distribution: histogram, percentiles,
        maximum and the ``atol`` line. Needs ``statistics=True`` and ``tensoracle[plot]``; save
        it with ``figure.savefig("errors.png")`` (or ``.svg``)."""
        return error_figure(self, title)


def compare_outputs(
    candidate: np.ndarray,
    reference: np.ndarray,
    *,
    atol: float | None = None,
    rtol: float | None = None,
    statistics: bool = False,
    histogram_bins: int = 10,
) -> OutputComparison:
    """Compares a candidate output array with its reference array.

    Args:
        candidate: The array under test (any NumPy array, contiguous or strided, or a NumPy
            scalar).
        reference: The array it should match, of the same nonempty shape and the same kind
            (floating point, integer or boolean); float types may differ (fp16 against fp32).
        atol: Absolute tolerance; give it together with ``rtol`` to count elements outside
            ``abs(candidate - reference) <= atol + rtol * abs(reference)``.
        rtol: Relative tolerance, see ``atol``.
        statistics: Also describe the absolute error distribution (``ErrorStatistics``); costs
            8 bytes of memory per element and a few extra passes. Floating point arrays only.
        histogram_bins: Number of histogram bins when ``statistics`` is true.

    Returns:
        An ``OutputComparison``; the function does not decide whether the candidate passes.

    Raises:
        TypeError: An argument is not a NumPy array.
        ValueError: Shapes differ, kinds differ, the arrays are empty, a dtype is not
            supported, or a tolerance is given alone, is not a number for ``float()``, or is
            negative or not finite.
    """
    candidate = _as_array(candidate, "candidate")
    reference = _as_array(reference, "reference")
    candidate_kind = _classify(candidate, "candidate")
    reference_kind = _classify(reference, "reference")
    if candidate.shape != reference.shape:
        raise ValueError(
            f"candidate shape {candidate.shape} differs from reference shape {reference.shape}"
        )
    if candidate_kind != reference_kind:
        raise ValueError(
            f"candidate dtype {candidate.dtype.name} ({_KIND_TEXT[candidate_kind]}) and "
            f"reference dtype {reference.dtype.name} ({_KIND_TEXT[reference_kind]}) are "
            "different kinds"
        )
    if candidate.size == 0:
        raise ValueError(
            f"candidate and reference are empty (shape {candidate.shape}); "
            "at least one element is needed"
        )
    tolerance = _tolerance(atol, rtol)
    if isinstance(histogram_bins, bool) or not isinstance(histogram_bins, numbers.Integral):
        raise TypeError(f"histogram_bins must be an integer, got {type(histogram_bins).__name__}")
    if histogram_bins < 1:
        raise ValueError(f"histogram_bins must be at least 1, got {histogram_bins}")

    candidate = _native(candidate)
    reference = _native(reference)
    count = candidate.size
    if candidate_kind != "floating":
        mismatches = _core.count_mismatches(_view(candidate), _view(reference), 0)
        return OutputComparison(
            kind=candidate_kind,
            element_count=count,
            candidate_nonfinite_count=0,
            reference_nonfinite_count=0,
            max_absolute_error=None,
            relative_l2_error=None,
            cosine_similarity=None,
            outside_tolerance_count=None,
            outside_tolerance_fraction=None,
            mismatch_count=mismatches,
            mismatch_fraction=mismatches / count,
        )

    measured = _core.compare_floating(
        _view(candidate),
        _view(reference),
        None if tolerance is None else tolerance[0],
        None if tolerance is None else tolerance[1],
        bool(statistics),
        int(histogram_bins),
        0,
    )
    outside = measured["outside_tolerance_count"]
    return OutputComparison(
        kind="floating",
        element_count=count,
        candidate_nonfinite_count=measured["candidate_nonfinite_count"],
        reference_nonfinite_count=measured["reference_nonfinite_count"],
        max_absolute_error=measured["max_abs_error"],
        relative_l2_error=measured["relative_l2_error"],
        cosine_similarity=measured["cosine_similarity"],
        outside_tolerance_count=outside,
        outside_tolerance_fraction=None if outside is None else outside / count,
        mismatch_count=None,
        mismatch_fraction=None,
        atol=None if tolerance is None else tolerance[0],
        rtol=None if tolerance is None else tolerance[1],
        statistics=_statistics(measured["statistics"]),
    )


def compare_kernel(candidate: np.ndarray, reference: np.ndarray) -> str:
    """Which first pass ``compare_outputs`` runs for two floating arrays: ``"avx512"`` or
    ``"avx2"`` (contiguous float64, float32, float16 or bfloat16 arrays on x86-64 Linux, on a CPU
    with those instructions and F16C) or ``"portable"``. The AVX2 pass gives the portable pass's
    results bit for bit, the AVX-512 pass the same counts and maxima and sums within 1e-14
    relative. ``TENSORACLE_COMPARE_KERNEL=avx2`` (or ``=portable``) chooses no faster pass."""
    return _core.compare_kernel(_view(_native(candidate)), _view(_native(reference)))


def _as_array(value: object, field: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):  # a NumPy scalar, such as a 0-d array indexed with ()
        return np.asarray(value)
    raise TypeError(f"{field} must be a NumPy array, got {type(value).__name__}")


def _classify(array: np.ndarray, field: str) -> Kind:
    name = array.dtype.name
    if name in _FLOATING or name in _WIDENED:
        return "floating"
    if name in _INTEGER:
        return "integer"
    if name == "bool":
        return "boolean"
    raise ValueError(
        f"{field} dtype {name} is not supported; compare_outputs accepts floating point "
        f"({', '.join(_FLOATING)}, other ml_dtypes floats, long double), integer and boolean "
        "arrays"
    )


def _tolerance(atol: float | None, rtol: float | None) -> tuple[float, float] | None:
    if atol is None and rtol is None:
        return None
    if atol is None or rtol is None:
        given, missing = ("atol", "rtol") if rtol is None else ("rtol", "atol")
        value = atol if rtol is None else rtol
        raise ValueError(
            f"{given}={value!r} was given without {missing}; give both atol and rtol to count "
            "elements outside tolerance, or neither"
        )
    values = []
    for name, value in (("atol", atol), ("rtol", rtol)):
        # As in tensoracle 1.x, anything float() takes is a tolerance ("1e-3" and True too).
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(
                f"{name} must be a number (anything float() accepts), got {value!r}"
            ) from None
        if not math.isfinite(number) or number < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        values.append(number)
    return values[0], values[1]


def _native(array: np.ndarray) -> np.ndarray:
    """Returns the array itself, or a copy the core can read: native byte order, and a type the
    core decodes (see _WIDENED)."""
    widened = _WIDENED.get(array.dtype.name)
    if widened is not None:
        with np.errstate(over="ignore"):  # a long double beyond float64 becomes inf
            return array.astype(widened)
    if array.dtype.isnative:
        return array
    return array.astype(array.dtype.newbyteorder("="))


def _view(array: np.ndarray) -> tuple[int, list[int], list[int], str]:
    # The caller keeps `array` referenced for the whole core call, so the address stays valid.
    return (array.ctypes.data, list(array.shape), list(array.strides), array.dtype.name)


def _statistics(described: dict[str, Any] | None) -> ErrorStatistics | None:
    if described is None:
        return None
    percentiles = dict(described["percentiles"])
    return ErrorStatistics(
        mean_absolute_error=described["mean_abs_error"],
        p50=percentiles[_PERCENTILES[0]],
        p90=percentiles[_PERCENTILES[1]],
        p99=percentiles[_PERCENTILES[2]],
        p999=percentiles[_PERCENTILES[3]],
        histogram_edges=tuple(described["histogram_edges"]),
        histogram_counts=tuple(described["histogram_counts"]),
    )


def _number(value: float | None) -> str:
    return "None" if value is None else f"{value:.6g}"


def _percent(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{100 * fraction:.4g}%"
