"""One self-contained HTML page for several named comparisons: every field, and the plots.

The page has no external resources: the style is inline and each error-distribution plot is an
SVG embedded as a data URI, so it can be mailed, archived or attached to a CI run as one file.
Plots need matplotlib (``tensoracle[plot]``) only when a comparison has statistics to draw.
"""

from __future__ import annotations

import base64
import html
import io
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tensoracle.compare.measure import OutputComparison
from tensoracle.compare.plot import error_figure

# (label, field) rows of the table; fields under "statistics." come from ErrorStatistics.
FIELDS: tuple[str, ...] = (
    "kind",
    "element_count",
    "candidate_nonfinite_count",
    "reference_nonfinite_count",
    "max_absolute_error",
    "relative_l2_error",
    "cosine_similarity",
    "atol",
    "rtol",
    "outside_tolerance_count",
    "outside_tolerance_fraction",
    "mismatch_count",
    "mismatch_fraction",
    "statistics.mean_absolute_error",
    "statistics.p50",
    "statistics.p90",
    "statistics.p99",
    "statistics.p999",
)
NOT_APPLICABLE = "\u2014"  # an em dash: the field is None for this comparison

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #1a1a1a; }
h1 { font-size: 1.5em; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border: 1px solid #c8c8c8; padding: 0.3em 0.8em; }
th { background: #f0f0f0; text-align: left; }
td { font-variant-numeric: tabular-nums; text-align: right; }
td.not-applicable { color: #888; text-align: center; }
tbody th { font-family: ui-monospace, monospace; font-weight: normal; }
section.plots { display: flex; flex-wrap: wrap; gap: 1.5em; }
figure { margin: 0; }
figure img { width: 640px; max-width: 100%; border: 1px solid #e0e0e0; }
figcaption { font-weight: bold; margin-bottom: 0.3em; }
p.no-plot { color: #555; }
"""


def field_value(comparison: OutputComparison, field: str) -> Any:
    """The value of one table row for ``comparison`` (None where it does not apply)."""
    if field.startswith("statistics."):
        statistics = comparison.statistics
        return None if statistics is None else getattr(statistics, field.split(".", 1)[1])
    return getattr(comparison, field)


def field_text(value: Any) -> str:
    """How the page writes a value: integers exactly, floats to 6 significant digits."""
    if value is None:
        return NOT_APPLICABLE
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _checked(comparisons: Any) -> dict[str, OutputComparison]:
    if not isinstance(comparisons, Mapping) or not comparisons:
        raise ValueError(
            "comparisons must be a non-empty mapping of names to OutputComparison, not "
            f"{comparisons!r}"
        )
    checked: dict[str, OutputComparison] = {}
    for name, comparison in comparisons.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"comparisons has an invalid name {name!r}; use a non-empty string")
        if not isinstance(comparison, OutputComparison):
            raise ValueError(
                f"comparisons[{name!r}] must be an OutputComparison (from compare_outputs), not "
                f"{comparison!r}"
            )
        checked[name] = comparison
    return checked


def _svg_data_uri(comparison: OutputComparison) -> str:
    figure = error_figure(comparison)  # the figure caption names it
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _no_plot_reason(comparison: OutputComparison) -> str | None:
    if comparison.kind != "floating":
        return f"{comparison.kind} arrays: compared exactly, no error distribution"
    if comparison.statistics is None:
        if comparison.candidate_nonfinite_count or comparison.reference_nonfinite_count:
            return "non-finite values: no error measures"
        return "no distribution: compare_outputs was called without statistics=True"
    return None


def render_comparison_report(
    comparisons: Mapping[str, OutputComparison], title: str = "Output comparisons"
) -> str:
    """The HTML text of the page ``write_comparison_report`` writes."""
    checked = _checked(comparisons)
    names = list(checked)
    escape: Callable[[str], str] = html.escape
    head = "".join(f'<th scope="col">{escape(name)}</th>' for name in names)
    rows = []
    for field in FIELDS:
        cells = []
        for name in names:
            value = field_value(checked[name], field)
            css = ' class="not-applicable"' if value is None else ""
            cells.append(
                f'<td data-comparison="{escape(name)}" data-field="{field}"{css}>'
                f"{escape(field_text(value))}</td>"
            )
        rows.append(f'<tr><th scope="row">{field}</th>{"".join(cells)}</tr>')
    plots = []
    for name in names:
        reason = _no_plot_reason(checked[name])
        if reason is None:
            source = _svg_data_uri(checked[name])
            alt = f"error distribution of {name}"
            plots.append(
                f"<figure><figcaption>{escape(name)}</figcaption>"
                f'<img alt="{escape(alt)}" src="{source}"></figure>'
            )
        else:
            plots.append(
                f'<figure><figcaption>{escape(name)}</figcaption><p class="no-plot">'
                f"{escape(reason)}</p></figure>"
            )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n"
        f'<table id="comparisons">\n<thead><tr><th scope="col">field</th>{head}</tr></thead>\n'
        f"<tbody>\n{chr(10).join(rows)}\n</tbody>\n</table>\n"
        f'<section class="plots">\n{chr(10).join(plots)}\n</section>\n</body>\n</html>\n'
    )


def write_comparison_report(
    comparisons: Mapping[str, OutputComparison],
    path: str | os.PathLike[str],
    *,
    title: str = "Output comparisons",
) -> Path:
    """Writes one self-contained HTML page: a table of every field of every named comparison
    (one column each, in the mapping's order) and each error-distribution plot.

    The file is replaced atomically: a failure leaves an existing file untouched. Returns the
    path written. Raises ValueError for an empty mapping, names that are not non-empty strings,
    values that are not OutputComparison, or a missing parent folder; ImportError (naming the
    ``tensoracle[plot]`` extra) when a comparison has statistics and matplotlib is missing."""
    if not isinstance(path, str | os.PathLike) or not os.fspath(path):
        raise ValueError(f"path must be a file path, not {path!r}")
    if not isinstance(title, str):
        raise ValueError(f"title must be a string, not {title!r}")
    target = Path(os.fspath(path))
    folder = target.parent
    if not folder.is_dir():
        raise ValueError(f"path {str(target)!r}: the folder {str(folder)!r} does not exist")
    page = render_comparison_report(comparisons, title)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(page)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
