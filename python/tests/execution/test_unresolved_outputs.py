"""set_input_shapes and an output left unresolved (api-1.x.md, execution): RuntimeError naming the
output and "shape". The rule lives in IOTable, which needs no TensorRT, and is tested here on
described tensors; the unit applies it after TensorRT's shape inference succeeds."""

from __future__ import annotations

import re

import pytest

from tensoracle.execution.io_table import IOTable, IOTensor

TAIL = (
    "still unresolved: not computable from the input shapes that are set; enqueue and shape "
    "queries are refused until set_input_shapes resolves every output"
)


def table() -> IOTable:
    """A ranged input and two outputs, as an engine describes them."""
    return IOTable(
        [
            IOTensor("features", "INPUT", (1, -1, 2), profile=((1, 1, 2), (1, 64, 2), (1, 448, 2))),
            IOTensor("result", "OUTPUT", (1, -1, 2)),
            IOTensor("summary", "OUTPUT", (1, 2)),
        ]
    )


def test_resolved_outputs_are_no_error() -> None:
    assert table().unresolved_output_error({"result": (1, 5, 2), "summary": (1, 2)}) is None


def test_an_output_with_a_run_time_dimension_is_named_with_its_shape() -> None:
    error = table().unresolved_output_error({"result": (1, -1, 2), "summary": (1, 2)})
    assert isinstance(error, RuntimeError)
    assert str(error) == (
        f"after set_input_shapes, the shape of output 'result' (1, -1, 2) is {TAIL}"
    )
    assert "summary" not in str(error)


def test_an_output_without_a_valid_shape_and_a_missing_one_are_both_named() -> None:
    error = table().unresolved_output_error({"result": None})
    assert isinstance(error, RuntimeError)
    assert str(error) == (
        "after set_input_shapes, the shapes of outputs 'result' (TensorRT reports no valid "
        f"shape), 'summary' (TensorRT reports no valid shape) are {TAIL}"
    )


@pytest.mark.parametrize("shape", [[1, -1, 2], (-1, -1, -1), (1, 3, -1)])
def test_any_minus_one_in_any_sequence_is_unresolved(shape: object) -> None:
    error = table().unresolved_output_error({"result": shape, "summary": (1, 2)})  # type: ignore[dict-item]
    assert error is not None
    assert re.search(r"output 'result' .*shape|shape of output 'result'", str(error))
