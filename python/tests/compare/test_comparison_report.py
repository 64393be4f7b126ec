"""OutputComparison.plot and write_comparison_report, down to the page a person looks at.

The report is opened in headless Chromium (Debian's ``chromium``, installed by ``make setup``):
its DOM, as the browser built it, is read back and every table cell is checked against the
comparison objects, and a screenshot shows that the embedded plots were decoded and drawn.
"""

from __future__ import annotations

import base64
import math
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tensoracle import OutputComparison, compare_outputs, write_comparison_report
from tensoracle.compare.report import FIELDS, NOT_APPLICABLE, field_value

BAR_COLOUR = (0x1F, 0x77, 0xB4)  # the histogram bars (error_plot._BARS)


def candidates() -> dict[str, OutputComparison]:
    rng = np.random.default_rng(21)
    reference = rng.normal(0.0, 1.0, (128, 64)).astype(np.float32)
    bf16 = reference.astype(ml_dtypes.bfloat16)
    fp16 = reference.astype(np.float16)
    return {
        "bf16 <vs> fp32": compare_outputs(
            bf16, reference, atol=0.004, rtol=0.0, statistics=True, histogram_bins=30
        ),
        "fp16 vs fp32": compare_outputs(
            fp16, reference, atol=1e-4, rtol=1e-3, statistics=True, histogram_bins=30
        ),
        "no statistics": compare_outputs(fp16, reference),
        "ids": compare_outputs(np.array([1, 2, 3]), np.array([1, 2, 4])),
        "nan": compare_outputs(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), statistics=True),
    }


# The plot --------------------------------------------------------------------------------------


def test_plot_draws_the_core_statistics_and_the_tolerance():
    comparison = candidates()["bf16 <vs> fp32"]
    statistics = comparison.statistics
    assert statistics is not None
    figure = comparison.plot(title="bf16")
    (axes,) = figure.axes
    bars = axes.patches
    assert [round(bar.get_height()) for bar in bars] == list(statistics.histogram_counts)
    assert [bar.get_x() for bar in bars] == pytest.approx(statistics.histogram_edges[:-1])
    lines = {line.get_label().split(" =")[0]: line.get_xdata()[0] for line in axes.lines}
    assert lines == {
        "p50": statistics.p50,
        "p90": statistics.p90,
        "p99": statistics.p99,
        "p99.9": statistics.p999,
        "max": comparison.max_absolute_error,
        "atol": 0.004,
    }
    assert axes.get_yscale() == "log"
    title = axes.get_title()
    assert title == f"bf16: 8192 elements, {comparison.outside_tolerance_count} outside tolerance"


def test_plot_legend_says_when_rtol_widens_each_bound():
    figure = candidates()["fp16 vs fp32"].plot()
    labels = [line.get_label() for line in figure.axes[0].lines]
    assert "atol = 0.0001 (+ rtol 0.001 x |reference| per element)" in labels


def test_plot_keeps_a_far_tolerance_off_the_axis():
    reference = np.linspace(-1.0, 1.0, 1000)
    comparison = compare_outputs(
        reference + 1e-4, reference, atol=0.5, rtol=0.0, statistics=True, histogram_bins=20
    )
    (axes,) = comparison.plot().axes
    tolerance = [line for line in axes.lines if line.get_label().startswith("atol")]
    assert [line.get_label() for line in tolerance] == ["atol = 0.5, off the axis"]
    assert len(tolerance[0].get_xdata()) == 0
    assert axes.get_xlim()[1] < 0.01  # the axis stays on the errors


def test_plot_saves_as_png_and_svg(tmp_path: Path):
    figure = candidates()["bf16 <vs> fp32"].plot()
    figure.savefig(tmp_path / "errors.png")
    figure.savefig(tmp_path / "errors.svg")
    assert (tmp_path / "errors.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    root = ElementTree.parse(tmp_path / "errors.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("no statistics", "without statistics=True"),
        ("ids", "integer comparison has no error distribution"),
        ("nan", "non-finite values (candidate 1, reference 0)"),
    ],
)
def test_plot_without_a_distribution_says_why(name: str, words: str):
    with pytest.raises(ValueError, match="error distribution") as raised:
        candidates()[name].plot()
    assert words in str(raised.value)


def test_missing_matplotlib_names_the_extra(tmp_path: Path):
    code = (
        "import sys\n"
        "sys.modules['matplotlib'] = None\n"
        "import numpy as np\n"
        "from tensoracle import compare_outputs, write_comparison_report\n"
        "c = compare_outputs(np.ones(3), np.ones(3), statistics=True)\n"
        "try:\n"
        "    c.plot()\n"
        "except ImportError as error:\n"
        "    print(error)\n"
        "plain = compare_outputs(np.ones(3), np.ones(3))\n"
        "write_comparison_report({'plain': plain}, 'report.html')\n"  # no plot: no matplotlib
        "print('page written')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert "pip install 'tensoracle[plot]'" in result.stdout
    assert "page written" in result.stdout
    assert "data:image" not in (tmp_path / "report.html").read_text()


# The page ---------------------------------------------------------------------------------------


def test_report_arguments_are_checked_and_a_failed_write_keeps_the_old_page(tmp_path: Path):
    page = tmp_path / "report.html"
    page.write_text("old page")
    comparison = candidates()["ids"]
    for bad, words in (
        ({}, "non-empty mapping"),
        ([comparison], "non-empty mapping"),
        ({"": comparison}, "invalid name ''"),
        ({"x": 3}, "comparisons['x'] must be an OutputComparison"),
    ):
        with pytest.raises(ValueError, match="comparisons") as raised:
            write_comparison_report(bad, page)  # type: ignore[arg-type]
        assert words in str(raised.value)
    with pytest.raises(ValueError, match="does not exist"):
        write_comparison_report({"x": comparison}, tmp_path / "missing" / "report.html")
    assert page.read_text() == "old page"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.html"]


def test_report_is_self_contained(tmp_path: Path):
    page = write_comparison_report(candidates(), tmp_path / "report.html", title="t & <t>")
    text = page.read_text(encoding="utf-8")
    assert "<title>t &amp; &lt;t&gt;</title>" in text
    for forbidden in ('src="http', "href=", "<script", "<link"):
        assert forbidden not in text
    sources = [part.split('"', 1)[0] for part in text.split('src="')[1:]]
    assert len(sources) == 2  # the two comparisons with statistics
    for source in sources:
        prefix = "data:image/svg+xml;base64,"
        assert source.startswith(prefix)
        svg = ElementTree.fromstring(base64.b64decode(source[len(prefix) :]))
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"


class _Cells(HTMLParser):
    """Collects the table cells (by data-comparison and data-field) and the figure captions."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], str] = {}
        self.notes: list[str] = []
        self.images = 0
        self._open: tuple[str, str] | None = None
        self._note = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "td":
            self._open = (str(found["data-comparison"]), str(found["data-field"]))
            self.cells[self._open] = ""
        elif tag == "img" and str(found.get("src", "")).startswith("data:image/svg+xml"):
            self.images += 1
        elif tag == "p" and found.get("class") == "no-plot":
            self._note = True
            self.notes.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._open = None
        elif tag == "p":
            self._note = False

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.cells[self._open] += data
        elif self._note:
            self.notes[-1] += data


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("Debian's chromium is not installed (make setup installs it)")
    return found


def browse(page: Path, profile: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",  # tests run as root in CI
            "--disable-gpu",
            f"--user-data-dir={profile}",
            *flags,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def check_cell(text: str, value: object, where: tuple[str, str]) -> None:
    if value is None:
        assert text == NOT_APPLICABLE, where
    elif isinstance(value, bool | str):
        assert text == str(value), where
    elif isinstance(value, int):
        assert int(text) == value, where
    else:
        assert isinstance(value, float)
        assert math.isclose(float(text), value, rel_tol=5e-6, abs_tol=0.0), (where, text, value)


def test_report_renders_in_chromium_with_every_value_and_every_plot(tmp_path: Path):
    comparisons = candidates()
    page = write_comparison_report(comparisons, tmp_path / "report.html", title="precisions")

    dom = browse(page, tmp_path / "profile", "--dump-dom").stdout
    read = _Cells()
    read.feed(dom)
    assert len(read.cells) == len(FIELDS) * len(comparisons)
    for name, comparison in comparisons.items():
        for field in FIELDS:
            check_cell(read.cells[(name, field)], field_value(comparison, field), (name, field))
    assert read.cells[("ids", "mismatch_count")] == "1"
    assert read.cells[("bf16 <vs> fp32", "kind")] == "floating"
    assert read.images == 2
    assert read.notes == [
        "no distribution: compare_outputs was called without statistics=True",
        "integer arrays: compared exactly, no error distribution",
        "non-finite values: no error measures",
    ]

    from PIL import Image

    shot = tmp_path / "report.png"
    browse(
        page,
        tmp_path / "profile",
        "--hide-scrollbars",
        "--window-size=1400,1800",
        f"--screenshot={shot}",
    )
    with Image.open(shot) as image:
        assert image.size == (1400, 1800)
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    bar_pixels = np.count_nonzero(np.all(pixels == BAR_COLOUR, axis=1))
    assert bar_pixels > 500, "the histogram bars of the embedded plots were not drawn"
