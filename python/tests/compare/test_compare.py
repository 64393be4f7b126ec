"""Tests of compare_outputs against a float64 NumPy reference written here."""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tensoracle import ErrorStatistics, OutputComparison, compare_outputs

NATIVE_FLOATS = (np.float16, np.float32, np.float64)
NARROW_FLOATS = (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)
INTEGERS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def power_of_two_scale(values: np.ndarray) -> int:
    """Exponent e such that values * 2**-e is at most 1 in magnitude (0 for all zeros)."""
    largest = float(np.max(np.abs(values)))
    return 0 if largest == 0 else int(np.frexp(largest)[1])


def reference_measures(candidate, reference, atol=None, rtol=None) -> dict:
    """The expected float fields, computed plainly in float64 with power-of-two rescaling."""
    c = candidate.astype(np.float64)
    r = reference.astype(np.float64)
    expected = {
        "candidate_nonfinite_count": int(np.count_nonzero(~np.isfinite(c))),
        "reference_nonfinite_count": int(np.count_nonzero(~np.isfinite(r))),
        "max_absolute_error": None,
        "relative_l2_error": None,
        "cosine_similarity": None,
        "outside_tolerance_count": None,
        "outside_tolerance_fraction": None,
    }
    if expected["candidate_nonfinite_count"] or expected["reference_nonfinite_count"]:
        return expected
    with np.errstate(over="ignore"):  # a difference may exceed the float64 range: inf
        error = np.abs(c - r)
    expected["max_absolute_error"] = float(np.max(error))
    if atol is not None:
        outside = int(np.count_nonzero(~(error <= atol + rtol * np.abs(r))))
        expected["outside_tolerance_count"] = outside
        expected["outside_tolerance_fraction"] = outside / c.size
    c_exponent, r_exponent = power_of_two_scale(c), power_of_two_scale(r)
    cs, rs = np.ldexp(c, -c_exponent), np.ldexp(r, -r_exponent)
    if np.isfinite(expected["max_absolute_error"]):
        d_exponent = power_of_two_scale(error)
        ds = np.ldexp(c - r, -d_exponent)
    else:  # the difference overflows: scale both sides alike first
        d_exponent = max(c_exponent, r_exponent)
        ds = np.ldexp(c, -d_exponent) - np.ldexp(r, -d_exponent)
    r_norm, c_norm = np.sqrt(np.sum(rs * rs)), np.sqrt(np.sum(cs * cs))
    if np.any(r != 0):
        ratio = np.sqrt(np.sum(ds * ds)) / r_norm
        with np.errstate(over="ignore"):  # the true ratio may exceed the float64 range
            expected["relative_l2_error"] = float(np.ldexp(ratio, d_exponent - r_exponent))
    if np.any(r != 0) and np.any(c != 0):
        expected["cosine_similarity"] = float(np.sum(cs * rs) / (c_norm * r_norm))
    return expected


def assert_matches(result: OutputComparison, expected: dict) -> None:
    for name in ("candidate_nonfinite_count", "reference_nonfinite_count"):
        assert getattr(result, name) == expected[name], name
    for name in ("max_absolute_error", "outside_tolerance_count", "outside_tolerance_fraction"):
        assert getattr(result, name) == expected[name], name
    if expected["relative_l2_error"] is None:
        assert result.relative_l2_error is None
    else:
        assert math.isclose(result.relative_l2_error, expected["relative_l2_error"], rel_tol=1e-12)
    if expected["cosine_similarity"] is None:
        assert result.cosine_similarity is None
    else:
        # The dot product may cancel, so the bound is absolute (cosine lies in [-1, 1]).
        assert result.cosine_similarity == pytest.approx(
            expected["cosine_similarity"], rel=0, abs=1e-12
        )
    assert result.mismatch_count is None
    assert result.mismatch_fraction is None


def strided_array(draw, dtype, shape: tuple[int, ...], elements=None) -> np.ndarray:
    """An array of `shape` viewed with steps of either sign inside a larger buffer, sometimes
    transposed, so that it is not contiguous."""
    transpose = len(shape) > 1 and draw(st.booleans())
    stored = shape[::-1] if transpose else shape
    base = draw(hnp.arrays(dtype, tuple(2 * n for n in stored), elements=elements))
    choices = {
        1: lambda n: slice(0, n),
        -1: lambda n: slice(2 * n - 1, n - 1, -1),
        2: lambda n: slice(None, None, 2),
        -2: lambda n: slice(None, None, -2),
    }
    slices = tuple(choices[draw(st.sampled_from(list(choices)))](n) for n in stored)
    view = base[slices] if slices else base
    return view.T if transpose else view


@st.composite
def float_pairs(draw) -> tuple[np.ndarray, np.ndarray]:
    """Two float arrays of one shape: any native float types, any values, strided views."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=6))
    arrays = []
    for _ in range(2):
        dtype = np.dtype(draw(st.sampled_from(NATIVE_FLOATS)))
        finite = draw(st.booleans())
        elements = hnp.from_dtype(dtype, allow_nan=not finite, allow_infinity=not finite)
        arrays.append(strided_array(draw, dtype, shape, elements))
    return arrays[0], arrays[1]


tolerances = st.one_of(
    st.none(),
    st.tuples(
        st.floats(0, 10, allow_subnormal=False),
        st.floats(0, 1, allow_subnormal=False),
    ),
)


@settings(max_examples=400, deadline=None)
@given(pair=float_pairs(), tolerance=tolerances)
def test_every_float_field_matches_the_numpy_reference(pair, tolerance):
    candidate, reference = pair
    atol, rtol = (None, None) if tolerance is None else tolerance
    result = compare_outputs(candidate, reference, atol=atol, rtol=rtol)
    assert result.kind == "floating"
    assert result.element_count == candidate.size
    assert_matches(result, reference_measures(candidate, reference, atol, rtol))


@settings(max_examples=300, deadline=None)
@given(
    reference=hnp.arrays(
        np.float64,
        st.integers(1, 30),
        elements=st.floats(allow_nan=False, allow_infinity=False),
    ),
    ulps=st.lists(st.integers(-3, 3), min_size=30, max_size=30),
    tolerance=tolerances,
)
def test_nearly_equal_arrays_of_any_magnitude(reference, ulps, tolerance):
    """Differences of a few units in the last place, where squares under- and overflow."""
    steps = np.array(ulps[: reference.size], dtype=np.float64)
    atol, rtol = (None, None) if tolerance is None else tolerance
    with np.errstate(all="ignore"):  # steps next to the float64 maximum give inf
        candidate = reference + steps * np.spacing(reference)
        result = compare_outputs(candidate, reference, atol=atol, rtol=rtol)
        expected = reference_measures(candidate, reference, atol, rtol)
    assert_matches(result, expected)


@settings(max_examples=150, deadline=None)
@given(
    values=hnp.arrays(np.float32, st.integers(1, 40), elements=st.floats(-300, 300, width=32)),
    narrow=st.sampled_from((*NARROW_FLOATS, np.float16)),
    flip=st.booleans(),
    tolerance=tolerances,
)
def test_narrow_floats_against_float32(values, narrow, flip, tolerance):
    candidate = values.astype(narrow)  # fp8 e4m3fn turns overflow into NaN, e5m2 into inf
    reference = values[::-1] if flip else values
    candidate = candidate[::-1] if flip else candidate
    atol, rtol = (None, None) if tolerance is None else tolerance
    result = compare_outputs(candidate, reference, atol=atol, rtol=rtol)
    assert_matches(result, reference_measures(candidate, reference, atol, rtol))


@pytest.mark.parametrize("position", [0, 7, 19])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("side", ["candidate", "reference"])
def test_a_nonfinite_value_anywhere_empties_every_float_measure(position, value, side):
    candidate = np.linspace(1, 2, 20)
    reference = candidate + 0.5
    (candidate if side == "candidate" else reference)[position] = value
    result = compare_outputs(candidate, reference, atol=1.0, rtol=1.0, statistics=True)
    counts = (result.candidate_nonfinite_count, result.reference_nonfinite_count)
    assert counts == ((1, 0) if side == "candidate" else (0, 1))
    assert result.max_absolute_error is None
    assert result.relative_l2_error is None
    assert result.cosine_similarity is None
    assert result.outside_tolerance_count is None
    assert result.outside_tolerance_fraction is None
    assert result.statistics is None


def test_zero_norms():
    zeros = np.zeros(4, np.float32)
    ones = np.ones(4, np.float16)
    zero_reference = compare_outputs(ones, zeros)
    assert zero_reference.max_absolute_error == 1.0
    assert zero_reference.relative_l2_error is None
    assert zero_reference.cosine_similarity is None
    zero_candidate = compare_outputs(zeros, ones)
    assert zero_candidate.relative_l2_error == 1.0
    assert zero_candidate.cosine_similarity is None
    both = compare_outputs(zeros, -zeros)
    assert (both.max_absolute_error, both.relative_l2_error, both.cosine_similarity) == (
        0,
        None,
        None,
    )


def test_tolerance_bound_is_inclusive_and_counted():
    reference = np.array([1.0, 2.0, 4.0, -8.0])
    candidate = reference + np.array([0.5, 0.5, 1.0, 2.5])
    result = compare_outputs(candidate, reference, atol=0.5, rtol=0.125)
    # Bounds: 0.625, 0.75, 1.0, 1.5: the first three are inside, the last is outside.
    assert result.outside_tolerance_count == 1
    assert result.outside_tolerance_fraction == 0.25
    assert result.atol == 0.5
    assert result.rtol == 0.125


def test_large_arrays_use_threads_and_stay_accurate():
    rng = np.random.default_rng(5)
    reference = rng.standard_normal(3_000_001).astype(np.float32)
    candidate = (reference + rng.standard_normal(reference.size) * 1e-3).astype(np.float16)
    result = compare_outputs(candidate, reference, atol=1e-3, rtol=1e-3)
    assert_matches(result, reference_measures(candidate, reference, 1e-3, 1e-3))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_integer_and_boolean_mismatches_are_exact(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5))
    if data.draw(st.booleans()):
        dtypes = (np.dtype(np.bool_), np.dtype(np.bool_))
    else:
        dtypes = tuple(np.dtype(data.draw(st.sampled_from(INTEGERS))) for _ in range(2))
    candidate, reference = (strided_array(data.draw, dtype, shape) for dtype in dtypes)
    if data.draw(st.booleans()):  # make some elements agree across the two types
        common = np.asarray(np.clip(candidate.astype(object), 0, 100)).astype(reference.dtype)
        reference = np.where(
            np.arange(reference.size).reshape(reference.shape) % 2, common, reference
        )
    expected = sum(
        int(a) != int(b)
        for a, b in zip(candidate.ravel().tolist(), reference.ravel().tolist(), strict=True)
    )
    result = compare_outputs(candidate, reference)
    assert result.kind == ("boolean" if dtypes[0] == np.bool_ else "integer")
    assert result.mismatch_count == expected
    assert result.mismatch_fraction == expected / candidate.size
    assert (result.candidate_nonfinite_count, result.reference_nonfinite_count) == (0, 0)
    assert result.max_absolute_error is None
    assert result.outside_tolerance_count is None


def test_signed_and_unsigned_integers_compare_by_value():
    minus_one = np.array([-1, 3], np.int64)
    largest = np.array([np.iinfo(np.uint64).max, 3], np.uint64)
    assert compare_outputs(minus_one, largest).mismatch_count == 1
    assert compare_outputs(np.array([200], np.uint8), np.array([200], np.int64)).mismatch_count == 0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_every_code_decodes_like_ml_dtypes(dtype):
    from tensoracle import _core

    bits = 16 if dtype.endswith("16") else 8
    codes = np.arange(2**bits, dtype=np.uint16 if bits == 16 else np.uint8)
    with np.errstate(invalid="ignore"):  # ml_dtypes warns when it widens NaN codes
        expected = codes.view(np.dtype(getattr(ml_dtypes, dtype, None) or dtype)).astype(np.float64)
    decoded = np.array(_core.decode_codes(dtype, codes.tolist()))
    np.testing.assert_array_equal(decoded, expected)  # NaN matches NaN
    np.testing.assert_array_equal(np.signbit(decoded), np.signbit(expected))
    # The comparison itself reads every finite code exactly.
    finite = np.isfinite(expected)
    narrow = codes.view(np.dtype(getattr(ml_dtypes, dtype, None) or dtype))[finite]
    assert compare_outputs(narrow, expected[finite]).max_absolute_error == 0.0


@pytest.mark.parametrize(
    "dtype",
    [
        "float8_e4m3fnuz",
        "float8_e5m2fnuz",
        "float8_e4m3b11fnuz",
        "float8_e4m3",
        "float8_e3m4",
        "float8_e8m0fnu",
        "float6_e2m3fn",
        "float6_e3m2fn",
        "float4_e2m1fn",
    ],
)
def test_other_ml_dtypes_floats_are_widened_exactly(dtype):
    values = np.array([0.25, -1.5, 3.0, 6.0, 0.1], dtype=np.float32)
    narrow = values.astype(getattr(ml_dtypes, dtype))[::-1]
    result = compare_outputs(narrow, values[::-1], atol=0.01, rtol=0.0)
    assert_matches(result, reference_measures(narrow, values[::-1], 0.01, 0.0))


def test_long_double_is_compared_in_float64():
    reference = np.array([1.0, 2.0, 3.0])
    candidate = np.array([1.0, 2.5, 3.0], dtype=np.longdouble)
    result = compare_outputs(candidate, reference)
    assert result.max_absolute_error == 0.5
    assert result.relative_l2_error == pytest.approx(0.5 / math.sqrt(14), rel=1e-15)


def test_broadcast_views_are_read_in_place():
    row = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    candidate = np.broadcast_to(row, (4, 3))  # stride 0 along the first axis
    column = np.broadcast_to(np.array([[1.0], [2.0], [3.0], [4.0]]), (4, 3))
    result = compare_outputs(candidate, column)
    assert_matches(result, reference_measures(candidate, column))
    assert (
        compare_outputs(np.broadcast_to(np.int8(5), (2, 2)), np.full((2, 2), 5)).mismatch_count == 0
    )


def test_byte_swapped_and_read_only_arrays():
    reference = np.arange(10, dtype=np.float64)
    swapped = reference.astype(">f8")
    swapped.flags.writeable = False
    result = compare_outputs(swapped, reference + 1)
    assert result.max_absolute_error == 1.0


def test_statistics_match_numpy():
    rng = np.random.default_rng(3)
    reference = rng.standard_normal((300, 7))
    candidate = (reference + rng.standard_normal(reference.shape) * 0.01)[::-1]
    error = np.abs(candidate - reference)
    result = compare_outputs(candidate, reference, statistics=True, histogram_bins=12)
    stats = result.statistics
    assert isinstance(stats, ErrorStatistics)
    assert stats.mean_absolute_error == pytest.approx(np.mean(error), rel=1e-12)
    expected = np.percentile(error, [50, 90, 99, 99.9])
    assert [stats.p50, stats.p90, stats.p99, stats.p999] == pytest.approx(expected, rel=1e-12)
    counts, edges = np.histogram(error, bins=12, range=(0, error.max()))
    assert stats.histogram_counts == tuple(counts.tolist())
    assert stats.histogram_edges == tuple(edges.tolist())
    assert compare_outputs(candidate, reference).statistics is None


def test_statistics_of_identical_arrays():
    values = np.ones(5, np.float32)
    stats = compare_outputs(values, values, statistics=True, histogram_bins=2).statistics
    assert (stats.mean_absolute_error, stats.p50, stats.p999) == (0.0, 0.0, 0.0)
    assert stats.histogram_edges == (0.0, 0.5, 1.0)
    assert stats.histogram_counts == (5, 0)


def test_summary_and_repr():
    result = compare_outputs(np.array([3.0, 4.5]), np.array([3.0, 4.0]), atol=0.1, rtol=0)
    assert result.summary() == (
        "floating point, 2 elements: max_absolute_error=0.5 relative_l2_error=0.1 "
        "cosine_similarity=0.99846 outside_tolerance=1 (50%) at atol=0.1 rtol=0"
    )
    assert str(result) == result.summary()
    # The dataclass's own repr, every field in order, as in tensoracle 1.x.
    assert repr(result).startswith(
        "OutputComparison(candidate_nonfinite_count=0, reference_nonfinite_count=0, "
        "max_absolute_error=0.5, relative_l2_error=0.1, "
    )
    assert repr(result).endswith(
        "mismatch_count=None, mismatch_fraction=None, kind='floating', element_count=2, "
        "atol=0.1, rtol=0.0, statistics=None)"
    )
    integers = compare_outputs(np.array([1, 2, 3]), np.array([1, 2, 4]))
    assert str(integers) == "integer, 3 elements: mismatch_count=1 (33.33%)"
    nonfinite = compare_outputs(np.array([np.nan, 1.0]), np.array([1.0, np.inf]))
    assert str(nonfinite) == (
        "floating point, 2 elements: non-finite values (candidate 1, reference 1); no measures"
    )
    assert "max_absolute_error=None" in repr(nonfinite)


@pytest.mark.parametrize(
    ("candidate", "reference", "kwargs", "error", "message"),
    [
        (
            np.zeros((2, 3)),
            np.zeros((3, 2)),
            {},
            ValueError,
            "candidate shape (2, 3) differs from reference shape (3, 2)",
        ),
        (
            np.zeros(3, np.float32),
            np.zeros(3, np.int32),
            {},
            ValueError,
            "candidate dtype float32 (floating point) and reference dtype int32 (integer) "
            "are different kinds",
        ),
        (
            np.zeros(3, np.bool_),
            np.zeros(3, np.uint8),
            {},
            ValueError,
            "candidate dtype bool (boolean) and reference dtype uint8 (integer) are "
            "different kinds",
        ),
        (
            np.zeros((0, 4)),
            np.zeros((0, 4)),
            {},
            ValueError,
            "candidate and reference are empty (shape (0, 4)); at least one element is needed",
        ),
        (
            np.zeros(2),
            np.zeros(2),
            {"atol": 0.01},
            ValueError,
            "atol=0.01 was given without rtol; give both atol and rtol to count elements "
            "outside tolerance, or neither",
        ),
        (
            np.zeros(2),
            np.zeros(2),
            {"rtol": 0},
            ValueError,
            "rtol=0 was given without atol; give both atol and rtol to count elements "
            "outside tolerance, or neither",
        ),
        (
            np.zeros(2),
            np.zeros(2),
            {"atol": -1.0, "rtol": 0.0},
            ValueError,
            "atol must be a finite number >= 0, got -1.0",
        ),
        (
            np.zeros(2),
            np.zeros(2),
            {"atol": 0.0, "rtol": float("nan")},
            ValueError,
            "rtol must be a finite number >= 0, got nan",
        ),
        (
            np.zeros(2),
            np.zeros(2),
            {"atol": "a tenth", "rtol": 0.0},
            ValueError,
            "atol must be a number (anything float() accepts), got 'a tenth'",
        ),
        (
            np.zeros(2),
            np.zeros(2),
            {"atol": 0.1, "rtol": [0.0]},
            ValueError,
            "rtol must be a number (anything float() accepts), got [0.0]",
        ),
        (
            np.zeros(2),
            np.zeros(2),
            {"statistics": True, "histogram_bins": 0},
            ValueError,
            "histogram_bins must be at least 1, got 0",
        ),
        (
            [1.0, 2.0],
            np.zeros(2),
            {},
            TypeError,
            "candidate must be a NumPy array, got list",
        ),
        (
            np.zeros(2),
            np.zeros(2, np.complex64),
            {},
            ValueError,
            "reference dtype complex64 is not supported; compare_outputs accepts floating point "
            "(float16, float32, float64, bfloat16, float8_e4m3fn, float8_e5m2, other ml_dtypes "
            "floats, long double), integer and boolean arrays",
        ),
    ],
)
def test_errors_name_the_field_and_value(candidate, reference, kwargs, error, message):
    with pytest.raises(error) as raised:
        compare_outputs(candidate, reference, **kwargs)
    assert str(raised.value) == message


def test_tolerances_go_through_float_as_in_1x():
    candidate, reference = np.array([1.0, 1.5]), np.array([1.0, 1.0])
    as_text = compare_outputs(candidate, reference, atol="0.25", rtol=True)
    assert (as_text.atol, as_text.rtol) == (0.25, 1.0)
    assert as_text.outside_tolerance_count == 0  # 0.5 <= 0.25 + 1.0 * 1.0


def test_large_non_contiguous_views_cross_blocks_and_rows():
    rng = np.random.default_rng(12)
    base = rng.standard_normal((400, 3, 500)).astype(np.float32)
    candidate = base[::-2, :, ::3].transpose(2, 0, 1)  # 167 x 200 x 3, no dimension mergeable
    reference = np.ascontiguousarray(candidate, dtype=np.float64)
    reference += rng.standard_normal(reference.shape) * 1e-4
    reference = reference[::-1, :, ::-1].copy()[::-1, :, ::-1]  # a copy read backwards
    assert candidate.size > 65536
    assert not candidate.flags.c_contiguous
    result = compare_outputs(candidate, reference, atol=1e-4, rtol=0.0, statistics=True)
    assert_matches(result, reference_measures(candidate, reference, 1e-4, 0.0))
    error = np.abs(candidate.astype(np.float64) - reference)
    assert result.statistics.p90 == pytest.approx(np.percentile(error, 90), rel=1e-12)
    integers = compare_outputs(
        (candidate * 100).astype(np.int16), (reference * 100).astype(np.int64)
    )
    expected = np.count_nonzero(
        (candidate * 100).astype(np.int16).astype(np.int64) != (reference * 100).astype(np.int64)
    )
    assert integers.mismatch_count == expected > 0


def test_threads_do_not_change_any_bit():
    from tensoracle import _core
    from tensoracle.compare.measure import _view

    rng = np.random.default_rng(9)
    reference = rng.standard_normal(1_500_000)
    candidate = (reference + rng.standard_normal(reference.size) * 1e-2)[::-1]
    results = [
        _core.compare_floating(_view(candidate), _view(reference), 1e-2, 1e-2, True, 10, threads)
        for threads in (1, 2, 5)
    ]
    assert results[0] == results[1] == results[2]


def test_concurrent_calls_from_python_threads_agree_with_sequential_ones():
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(4)
    pairs = [
        (rng.standard_normal(400_000).astype(dtype), rng.standard_normal(400_000))
        for dtype in (np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e5m2, np.float32)
    ]
    sequential = [compare_outputs(c, r, atol=0.1, rtol=0.1) for c, r in pairs]
    with ThreadPoolExecutor(4) as pool:
        concurrent = list(pool.map(lambda p: compare_outputs(*p, atol=0.1, rtol=0.1), pairs))
    assert concurrent == sequential


def test_the_gil_is_released_while_comparing():
    import threading
    import time

    rng = np.random.default_rng(8)
    reference = rng.standard_normal(10_000_000)
    candidate = reference[::-1]

    def compare() -> None:
        compare_outputs(candidate, reference, statistics=True)

    started = time.perf_counter()
    compare()
    alone = time.perf_counter() - started

    worker = threading.Thread(target=compare)
    ticks = [time.perf_counter()]
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    longest_pause = max(later - earlier for earlier, later in itertools.pairwise(ticks))
    # Holding the GIL during the call would stop this loop for the whole call.
    assert longest_pause < alone / 2, (longest_pause, alone)
