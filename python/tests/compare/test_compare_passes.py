"""compare_outputs with each first pass this CPU has (AVX-512, AVX2, portable, chosen with
TENSORACLE_COMPARE_KERNEL as a user may) against NumPy float64 on the same arrays: counts and the
maximum error exactly, the relative L2 error, the cosine similarity and the mean error to 1e-9
relative; contiguous arrays run the vector passes, strided ones the portable pass."""

from __future__ import annotations

import numpy as np
import pytest

from tensoracle import compare_outputs
from tensoracle.compare.measure import compare_kernel

ATOL, RTOL = 1e-3, 1e-2


def available_passes() -> list[str]:
    probe = np.ones(8, dtype=np.float16)
    found = []
    with pytest.MonkeyPatch.context() as patch:
        for chosen in ("avx512", "avx2", "portable"):
            patch.setenv("TENSORACLE_COMPARE_KERNEL", chosen)
            ran = compare_kernel(probe, probe)
            if ran == chosen:
                found.append(ran)
    return found


def numpy_fields(candidate: np.ndarray, reference: np.ndarray) -> dict[str, float | int]:
    c = candidate.astype(np.float64)
    r = reference.astype(np.float64)
    error = np.abs(c - r)
    return {
        "max_absolute_error": float(error.max()),
        "relative_l2_error": float(np.sqrt(np.sum(error * error)) / np.sqrt(np.sum(r * r))),
        "cosine_similarity": float(np.sum(c * r) / np.sqrt(np.sum(c * c) * np.sum(r * r))),
        "outside_tolerance_count": int(np.count_nonzero(~(error <= ATOL + RTOL * np.abs(r)))),
        "mean": float(error.mean()),
    }


def test_the_portable_pass_is_always_there_and_this_machine_has_a_vector_pass():
    passes = available_passes()
    assert "portable" in passes
    # make test runs on x86-64 machines with AVX2: a vector pass that never ran proves nothing.
    assert len(passes) >= 2, passes


@pytest.mark.parametrize("pass_name", available_passes())
@pytest.mark.parametrize(
    ("candidate_dtype", "reference_dtype"),
    [(np.float16, np.float32), (np.float32, np.float32), (np.float64, np.float16),
     (np.float16, np.float64)],
)  # fmt: skip
@pytest.mark.parametrize("elements", [1, 7, 1021, 300_007])
def test_every_pass_agrees_with_numpy_float64(
    monkeypatch, pass_name, candidate_dtype, reference_dtype, elements
):
    monkeypatch.setenv("TENSORACLE_COMPARE_KERNEL", pass_name)
    rng = np.random.default_rng(elements)
    reference = (rng.standard_normal(elements) * 3).astype(reference_dtype)
    noise = rng.standard_normal(elements) * 0.01
    candidate = (reference.astype(np.float64) + noise).astype(candidate_dtype)
    assert compare_kernel(candidate, reference) == pass_name
    result = compare_outputs(candidate, reference, atol=ATOL, rtol=RTOL, statistics=True)
    expected = numpy_fields(candidate, reference)
    assert result.max_absolute_error == expected["max_absolute_error"]
    assert result.outside_tolerance_count == expected["outside_tolerance_count"]
    for name in ("relative_l2_error", "cosine_similarity"):
        assert getattr(result, name) == pytest.approx(expected[name], rel=1e-9), name
    assert result.statistics.mean_absolute_error == pytest.approx(expected["mean"], rel=1e-9)


def test_a_nan_or_an_infinity_is_counted_by_every_pass(monkeypatch):
    reference = np.linspace(-1, 1, 1029, dtype=np.float32)
    candidate = reference.astype(np.float16)
    candidate[17] = np.nan
    candidate[1028] = -np.inf
    for pass_name in available_passes():
        monkeypatch.setenv("TENSORACLE_COMPARE_KERNEL", pass_name)
        result = compare_outputs(candidate, reference)
        assert (result.candidate_nonfinite_count, result.reference_nonfinite_count) == (2, 0)
        assert result.max_absolute_error is None


def test_a_strided_array_runs_the_portable_pass_with_the_same_results(monkeypatch):
    monkeypatch.delenv("TENSORACLE_COMPARE_KERNEL", raising=False)
    rng = np.random.default_rng(5)
    reference = rng.standard_normal(20_000).astype(np.float32)
    candidate = (reference + rng.standard_normal(20_000) * 0.01).astype(np.float16)
    assert compare_kernel(candidate[::2], reference[::2]) == "portable"
    strided = compare_outputs(candidate[::2], reference[::2], atol=ATOL, rtol=RTOL)
    copied = np.ascontiguousarray(candidate[::2]), np.ascontiguousarray(reference[::2])
    monkeypatch.setenv("TENSORACLE_COMPARE_KERNEL", "avx2")
    contiguous = compare_outputs(*copied, atol=ATOL, rtol=RTOL)
    assert strided.outside_tolerance_count == contiguous.outside_tolerance_count
    assert strided.max_absolute_error == contiguous.max_absolute_error
    assert strided.relative_l2_error == contiguous.relative_l2_error  # AVX2: bit for bit
