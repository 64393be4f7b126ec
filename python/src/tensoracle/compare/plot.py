"""A picture of one comparison's error distribution (needs matplotlib: ``tensoracle[plot]``).

Everything drawn was measured by the C++ core (``compare_outputs(..., statistics=True)``): the
histogram counts and edges, the percentiles, the maximum absolute error and the tolerance count.
This module only draws them.

It sits below ``measure``: ``OutputComparison.plot`` calls ``error_figure``, and what
``error_figure`` reads of a comparison is written here as the protocols ``Measured`` and
``Distribution``, which ``OutputComparison`` and ``ErrorStatistics`` meet, so this module imports
nothing of ``measure``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from matplotlib.figure import Figure

EXTRA = "tensoracle[plot]"
# Colours of matplotlib's default cycle, fixed so that every figure reads the same.
_BARS = "#1f77b4"
_PERCENTILE = "#555555"
_MAXIMUM = "#2ca02c"
_TOLERANCE = "#d62728"
# The atol line is drawn when it lies within this multiple of the largest error.
_TOLERANCE_REACH = 3.0


class Distribution(Protocol):
    """What is drawn of an error distribution (``measure.ErrorStatistics``)."""

    @property
    def p50(self) -> float: ...
    @property
    def p90(self) -> float: ...
    @property
    def p99(self) -> float: ...
    @property
    def p999(self) -> float: ...
    @property
    def histogram_edges(self) -> Sequence[float]: ...
    @property
    def histogram_counts(self) -> Sequence[int]: ...


class Measured(Protocol):
    """What is drawn, or named when nothing can be drawn, of one comparison
    (``measure.OutputComparison``)."""

    @property
    def kind(self) -> str: ...
    @property
    def element_count(self) -> int: ...
    @property
    def candidate_nonfinite_count(self) -> int: ...
    @property
    def reference_nonfinite_count(self) -> int: ...
    @property
    def mismatch_count(self) -> int | None: ...
    @property
    def max_absolute_error(self) -> float | None: ...
    @property
    def outside_tolerance_count(self) -> int | None: ...
    @property
    def atol(self) -> float | None: ...
    @property
    def rtol(self) -> float | None: ...
    @property
    def statistics(self) -> Distribution | None: ...


def _figure_class() -> type[Figure]:
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            f"plotting a comparison needs matplotlib ({error}); install it with "
            f"pip install '{EXTRA}'"
        ) from error
    return Figure


def _number(value: float) -> str:
    return f"{value:.3g}"


def error_figure(comparison: Measured, title: str | None = None) -> Figure:
    """A matplotlib ``Figure`` of ``abs(candidate - reference)``: the histogram (log scale), the
    50th/90th/99th/99.9th percentiles, the maximum and, when given, the ``atol`` line (listed
    in the legend as off the axis when it exceeds three times the largest error).

    Raises ValueError when the comparison has no distribution: integer or boolean arrays,
    ``statistics=True`` not passed, or non-finite values on either side."""
    statistics = comparison.statistics
    if comparison.kind != "floating":
        raise ValueError(
            f"a {comparison.kind} comparison has no error distribution to plot; its "
            f"mismatch_count ({comparison.mismatch_count}) is the whole story"
        )
    if statistics is None:
        nonfinite = comparison.candidate_nonfinite_count + comparison.reference_nonfinite_count
        reason = (
            f"the arrays hold non-finite values (candidate {comparison.candidate_nonfinite_count}, "
            f"reference {comparison.reference_nonfinite_count})"
            if nonfinite
            else "compare_outputs was called without statistics=True"
        )
        raise ValueError(f"this comparison has no error distribution to plot: {reason}")
    figure = _figure_class()(figsize=(6.4, 3.4), layout="constrained")
    axes: Any = figure.add_subplot()
    edges = statistics.histogram_edges
    widths = [high - low for low, high in itertools.pairwise(edges)]
    axes.bar(
        edges[:-1],
        statistics.histogram_counts,
        width=widths,
        align="edge",
        color=_BARS,
        log=True,
        label=f"elements per bin ({len(widths)} bins)",
    )
    for name, value, style in (
        ("p50", statistics.p50, ":"),
        ("p90", statistics.p90, "-."),
        ("p99", statistics.p99, "--"),
        ("p99.9", statistics.p999, (0, (5, 1))),
    ):
        axes.axvline(value, color=_PERCENTILE, linestyle=style, label=f"{name} = {_number(value)}")
    maximum = comparison.max_absolute_error
    if maximum is not None:
        axes.axvline(maximum, color=_MAXIMUM, label=f"max = {_number(maximum)}")
    right = edges[-1]
    if comparison.atol is not None and comparison.rtol is not None:
        label = f"atol = {_number(comparison.atol)}"
        if comparison.rtol > 0:
            label += f" (+ rtol {_number(comparison.rtol)} x |reference| per element)"
        if comparison.atol <= _TOLERANCE_REACH * right:
            axes.axvline(comparison.atol, color=_TOLERANCE, linewidth=2, label=label)
            right = max(right, comparison.atol)
        else:  # far beyond every error: drawing it would squeeze the histogram into a sliver
            axes.plot([], [], color=_TOLERANCE, linewidth=2, label=f"{label}, off the axis")
    axes.set_xlim(0, right * 1.04)
    axes.set_xlabel("|candidate - reference|")
    axes.set_ylabel("elements")
    heading = f"{comparison.element_count} elements"
    if comparison.outside_tolerance_count is not None:
        heading += f", {comparison.outside_tolerance_count} outside tolerance"
    axes.set_title(heading if title is None else f"{title}: {heading}", fontsize="medium")
    axes.legend(fontsize="small", loc="upper right")
    return figure
