"""Execution stays free of buffer libraries, and the GPU tests' engines build here (RTX, no GPU)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from backend_requirement import rtx_module
from gpu_engines import (
    FEATURES_PROFILE,
    POINT_PROFILE,
    SHAPE_OUTPUT_PROFILE,
    SHAPE_VALUES,
    TWO_INPUTS_PROFILE,
    build_plan,
    features_result,
    fixed_and_point,
    shape_input,
    shape_output,
    two_inputs_sum,
)


def test_importing_execution_loads_no_cuda_buffer_library_or_tensorrt():
    code = (
        "import sys, tensoracle.execution; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'cupy', 'cuda', 'torch', 'tensorrt', 'tensorrt_rtx'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


@pytest.mark.parametrize(
    ("populate", "profile", "values"),
    [
        (features_result, FEATURES_PROFILE, None),
        (two_inputs_sum, TWO_INPUTS_PROFILE, None),
        (fixed_and_point, POINT_PROFILE, None),
        (shape_input, None, SHAPE_VALUES),
        (shape_output, SHAPE_OUTPUT_PROFILE, None),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_the_gpu_tests_engines_build_without_a_gpu(populate, profile, values, monkeypatch):
    rtx_module()
    monkeypatch.setenv("TENSORACLE_BACKEND", "tensorrt_rtx")
    plan = build_plan(populate, profile, values)
    assert plan[:4] == b"vtrt"  # TensorRT-RTX's serialized plan magic, seen in every build
