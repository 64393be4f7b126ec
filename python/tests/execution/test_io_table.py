"""The execution unit's rules on plain IO data, over tables described from real RTX networks."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

import pytest
from backend_requirement import rtx_module
from gpu_engines import (
    FEATURES_PROFILE,
    POINT_PROFILE,
    SHAPE_OUTPUT_PROFILE,
    TWO_INPUTS_PROFILE,
    features_result,
    fixed_and_point,
    nonzero,
    shape_input,
    shape_output,
    two_inputs_sum,
)
from io_tables import tensors_from_network

from tensoracle.errors import shape_output_message
from tensoracle.execution.io_table import (
    IOTable,
    IOTensor,
    reject_stream,
)


@pytest.fixture(autouse=True)
def rtx_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables are described from TensorRT-RTX networks, which need no GPU."""
    rtx_module()
    monkeypatch.setenv("TENSORACLE_BACKEND", "tensorrt_rtx")


def raises_exactly(error: type[Exception], text: str) -> Any:
    """pytest.raises for ``error`` whose whole message is ``text``."""
    return pytest.raises(error, match=f"^{re.escape(text)}$")


def features() -> IOTable:
    return IOTable(tensors_from_network(features_result, FEATURES_PROFILE))


def two_inputs() -> IOTable:
    return IOTable(tensors_from_network(two_inputs_sum, TWO_INPUTS_PROFILE))


def mixed() -> IOTable:
    """One input of each kind: fixed, single-point profile and ranged (plain data)."""
    return IOTable(
        [
            IOTensor("fixed", "INPUT", (2, 3)),
            IOTensor("point", "INPUT", (1, -1), profile=((1, 5), (1, 5), (1, 5))),
            IOTensor("ranged", "INPUT", (1, -1), profile=((1, 1), (1, 4), (1, 9))),
            IOTensor("out", "OUTPUT", (1, -1)),
        ]
    )


ADDRESSES = {"features": 0x7000_0000, "result": 0x7000_1000}
NOT_RUNNABLE = "the engine cannot be run by an execution unit: "


# ---- describing tensors ------------------------------------------------------------------------


def test_tensors_keep_plain_tuples_and_need_a_profile_for_run_time_dimensions():
    tensor = IOTensor("x", "INPUT", [1, -1], profile=([1, 1], [1, 2], [1, 3]))
    assert tensor.shape == (1, -1)
    assert tensor.profile == ((1, 1), (1, 2), (1, 3))
    with raises_exactly(
        ValueError, "IOTensor 'x': input shape (1, -1) has run-time dimensions but no profile"
    ):
        IOTensor("x", "INPUT", (1, -1))
    IOTensor("y", "OUTPUT", (1, -1))  # outputs have no profile


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        (("x", "NONE", (1,)), "IOTensor 'x': mode must be INPUT or OUTPUT, not 'NONE'"),
        (("", "INPUT", (1,)), "IOTensor.name must be a non-empty string, got ''"),
    ],
)
def test_tensors_refuse_unknown_modes_and_empty_names(arguments, text):
    with raises_exactly(ValueError, text):
        IOTensor(*arguments)


# ---- which engines a unit runs -----------------------------------------------------------------


def test_a_real_shape_tensor_input_is_refused():
    tensors = tensors_from_network(shape_input)
    assert [t.name for t in tensors if t.is_shape_io] == ["dims"]  # TensorRT-RTX says so
    with raises_exactly(
        ValueError, NOT_RUNNABLE + "input 'dims' is a shape tensor (its values set shapes)"
    ):
        IOTable(tensors)


@pytest.mark.parametrize("mode", ["INPUT", "OUTPUT"])
def test_host_location_tensors_are_refused(mode):
    host = IOTensor("x", mode, (4,), location="HOST")
    other = IOTensor("y", "OUTPUT" if mode == "INPUT" else "INPUT", (4,))
    with raises_exactly(ValueError, NOT_RUNNABLE + "'x' is a HOST-location tensor"):
        IOTable([host, other])


def test_every_problem_is_named_at_once_in_engine_order():
    tensors = [
        IOTensor("dims", "INPUT", (2,), is_shape_io=True),
        IOTensor("data", "INPUT", (6,), location="HOST"),
        IOTensor("out", "OUTPUT", (6,), location="HOST"),
    ]
    with raises_exactly(
        ValueError,
        NOT_RUNNABLE + "input 'dims' is a shape tensor (its values set shapes); "
        "'data' is a HOST-location tensor; 'out' is a HOST-location tensor",
    ):
        IOTable(tensors)


def test_a_shape_io_output_is_not_refused_by_the_table():
    # Shape-tensor outputs are reported by the saved header and only warned about.
    table = IOTable([IOTensor("x", "INPUT", (4,)), IOTensor("n", "OUTPUT", (1,), is_shape_io=True)])
    assert table.outputs == ("n",)


def test_duplicate_names_are_refused():
    with raises_exactly(ValueError, "the engine lists the tensor name 'x' twice"):
        IOTable([IOTensor("x", "INPUT", (4,)), IOTensor("x", "OUTPUT", (4,))])


def test_names_are_inputs_then_outputs_in_engine_order():
    table = IOTable(tensors_from_network(shape_output, SHAPE_OUTPUT_PROFILE))
    assert table.inputs == ("data",)
    assert table.outputs == ("size", "copy")
    assert table.names == ("data", "size", "copy")
    interleaved = IOTable(
        [
            IOTensor("o1", "OUTPUT", (1,)),
            IOTensor("i1", "INPUT", (1,)),
            IOTensor("o2", "OUTPUT", (1,)),
        ]
    )
    assert interleaved.names == ("i1", "o1", "o2")


# ---- creation shapes ---------------------------------------------------------------------------


def test_ranged_inputs_start_at_their_optimum_and_block_until_set():
    table = features()
    assert table.ranged == ("features",)
    assert table.creation_shapes == {"features": (1, 4, 2)}
    text = "input shapes are not set: call set_input_shapes with every ranged input ('features')"
    assert table.blocked_at_creation == text == table.not_shaped_reason


def test_fixed_and_single_point_inputs_are_set_at_creation_and_nothing_blocks():
    table = IOTable(tensors_from_network(fixed_and_point, POINT_PROFILE))
    assert table.ranged == ()
    assert table.creation_shapes == {"fixed": (2, 3), "point": (2, 3)}
    assert table.blocked_at_creation is None
    assert table.check_shapes({}) == {}  # nothing ranged: an empty setting is complete


def test_each_kind_of_input_gets_its_creation_shape():
    table = mixed()
    assert table.ranged == ("ranged",)
    assert table.creation_shapes == {"fixed": (2, 3), "point": (1, 5), "ranged": (1, 4)}


def test_the_incomplete_reason_names_every_ranged_input():
    assert two_inputs().incomplete_reason == (
        "input shapes are incomplete after a failed set_input_shapes call: "
        "call set_input_shapes again with every ranged input ('a', 'b')"
    )


def test_outputs_still_unknown_at_the_optimum_depend_on_data():
    table = IOTable(tensors_from_network(nonzero))
    # The network's own build-time shape: TensorRT-RTX cannot size NonZero's output.
    assert table.tensors["indices"].shape == (1, -1)
    with raises_exactly(
        ValueError,
        "outputs with data-dependent sizes are not supported by execution units: 'indices' (1, -1)",
    ):
        table.check_output_shapes({"indices": table.tensors["indices"].shape})
    table.check_output_shapes({"indices": (1, 5)})


def test_every_data_dependent_output_is_listed_and_concrete_ones_are_not():
    table = IOTable(
        [
            IOTensor("x", "INPUT", (4,)),
            IOTensor("a", "OUTPUT", (-1,)),
            IOTensor("b", "OUTPUT", (4,)),
            IOTensor("c", "OUTPUT", (2, -1)),
        ]
    )
    with raises_exactly(
        ValueError,
        "outputs with data-dependent sizes are not supported by execution units: "
        "'a' (-1,), 'c' (2, -1)",
    ):
        table.check_output_shapes({"a": [-1], "b": [4], "c": [2, -1]})


def test_the_shape_output_warning_names_every_output():
    assert shape_output_message(("size", "rows")) == (
        "engine outputs 'size', 'rows' are shape tensors; execution units (create_execution()) "
        "cannot handle them, and running such an engine may crash the process"
    )


# ---- names and input shapes --------------------------------------------------------------------


def test_unknown_names_are_value_errors_listing_the_known_ones():
    with raises_exactly(
        ValueError, "unknown tensor name 'nope'; the engine has 'features', 'result'"
    ):
        features().check_name("nope")
    features().check_name("result")


@pytest.mark.parametrize(
    ("shapes", "problems"),
    [
        ({"feature": (1, 4, 2)}, "'feature' (given (1, 4, 2)) is not an input of the engine; "
         "missing ranged inputs 'features'"),
        ({}, "missing ranged inputs 'features'"),
        ({"features": (1, 4)}, "'features': shape (1, 4) has rank 2, expected 3"),
        ({"features": (1, 4.0, 2)},
         "'features': shape (1, 4.0, 2) has dimensions [4.0] that are not nonnegative ints"),
        ({"features": (1, True, 2)},
         "'features': shape (1, True, 2) has dimensions [True] that are not nonnegative ints"),
        ({"features": [-1, 4, -2]},
         "'features': shape [-1, 4, -2] has dimensions [-1, -2] that are not nonnegative ints"),
        ({"features": 7}, "'features': shape 7 is not a sequence of ints"),
        ({"features": (1, 4, 2), "result": (1, 4, 2)},
         "'result' (given (1, 4, 2)) is not an input of the engine"),
    ],
)  # fmt: skip
def test_invalid_shape_settings_name_every_problem(shapes, problems):
    with raises_exactly(ValueError, "invalid input shapes: " + problems):
        features().check_shapes(shapes)


def test_fixed_and_single_point_inputs_are_not_part_of_a_setting():
    with raises_exactly(
        ValueError,
        "invalid input shapes: 'fixed' is not a ranged input (its shape is fixed by the engine "
        "profile); 'point' is not a ranged input (its shape is fixed by the engine profile)",
    ):
        mixed().check_shapes({"fixed": (2, 3), "point": (1, 5), "ranged": (1, 3)})


def test_shapes_must_be_a_mapping():
    with raises_exactly(ValueError, "shapes must be a mapping of input name to shape, got list"):
        features().check_shapes([("features", (1, 4, 2))])


def test_valid_settings_come_back_as_tuples_in_engine_order():
    checked = two_inputs().check_shapes(MappingProxyType({"b": [3], "a": range(2, 3)}))
    assert checked == {"a": (2,), "b": (3,)}
    assert list(checked) == ["a", "b"]


def test_a_tensorrt_rejection_names_the_shape_the_profile_range_and_the_reason():
    error = two_inputs().rejection_error([("b", (99,), "the backend logged no error")])
    assert str(error) == (
        "TensorRT rejected the shape of 'b' (99,) (profile 0 allows (1,) to (8,)): "
        "the backend logged no error; input shapes stay incomplete until set_input_shapes "
        "succeeds"
    )
    assert isinstance(error, RuntimeError)


def test_profile_ranges_of_ranged_and_fixed_inputs():
    table = mixed()
    assert table.profile_range("ranged") == "(1, 1) to (1, 9)"
    assert table.profile_range("point") == "(1, 5) to (1, 5)"
    assert table.profile_range("fixed") == "(2, 3) to (2, 3)"


# ---- enqueue arguments -------------------------------------------------------------------------


def test_valid_addresses_and_streams_pass():
    table = features()
    table.check_enqueue(ADDRESSES, 0)  # the legacy default stream
    table.check_enqueue(MappingProxyType(ADDRESSES), 0x55)
    table.check_enqueue({"result": 2**64 - 256, "features": 256}, 2**63)


@pytest.mark.parametrize(
    ("addresses", "error", "text"),
    [
        ({"features": 256}, ValueError, "invalid tensor addresses: missing addresses for 'result'"),
        ({**ADDRESSES, "extra": 256}, ValueError,
         "invalid tensor addresses: unknown tensor names 'extra'"),
        ({"features": 256, "other": 512}, ValueError,
         "invalid tensor addresses: missing addresses for 'result'; unknown tensor names 'other'"),
        ({**ADDRESSES, "result": 0}, ValueError,
         "invalid tensor addresses: 'result': address 0 is not positive"),
        ({"features": -8, "result": 0}, ValueError,
         "invalid tensor addresses: 'features': address -8 is not positive; "
         "'result': address 0 is not positive"),
        ({**ADDRESSES, "result": True}, ValueError,
         "device addresses must be positive ints; got 'result': True (bool)"),
        ({**ADDRESSES, "result": 256.0}, ValueError,
         "device addresses must be positive ints; got 'result': 256.0 (float)"),
        ({"features": "16", "result": None}, ValueError,
         "device addresses must be positive ints; got 'features': '16' (str); "
         "'result': None (NoneType)"),
        ([256, 512], ValueError, "addresses must map tensor names to device addresses, got list"),
        (None, ValueError, "addresses must map tensor names to device addresses, got NoneType"),
    ],
)  # fmt: skip
def test_bad_addresses_name_the_tensor_and_the_value(addresses, error, text):
    with raises_exactly(error, text):
        features().check_enqueue(addresses, 1)


@pytest.mark.parametrize(
    ("stream", "error", "text"),
    [
        (True, ValueError, "got True (bool)"),
        (False, ValueError, "got False (bool)"),
        (-1, ValueError, "got -1"),
        (1.0, ValueError, "got 1.0 (float)"),
        (None, ValueError, "got None (NoneType)"),
    ],
)
def test_bad_streams_are_refused_once_the_addresses_are_right(stream, error, text):
    full = "stream must be a nonnegative int CUDA stream handle, " + text
    with raises_exactly(error, full):
        features().check_enqueue(ADDRESSES, stream)
    # As in tensoracle 1.x, the addresses are judged first.
    with raises_exactly(
        ValueError, "addresses must map tensor names to device addresses, got NoneType"
    ):
        features().check_enqueue(None, stream)
    with raises_exactly(error, full):
        reject_stream(stream)


# ---- tables from a saved header ----------------------------------------------------------------


def test_the_saved_headers_io_signature_gives_the_networks_table(engine_cache, tmp_path):
    from engine_helpers import DECLARATION, IO, make_graph, write_weights
    from io_tables import tensors_from_signature

    from tensoracle import open_engine

    weights = write_weights(tmp_path / "model.safetensors")
    handle = open_engine(
        make_graph(weights), DECLARATION, name="table", graph_version="1", weights=(weights,), io=IO
    )
    from_header = IOTable(tensors_from_signature(handle.references["io"]))
    assert from_header.names == ("features", "result")
    assert from_header.ranged == ("features",)
    assert from_header.creation_shapes == {"features": (1, 64, 2)}  # the declared optimum
    assert from_header.profile_range("features") == "(1, 1, 2) to (1, 448, 2)"
    declared = {"features": ((1, 1, 2), (1, 64, 2), (1, 448, 2))}
    graph = make_graph(weights)
    network = tensors_from_network(lambda trt, definition: graph(definition), declared)
    assert list(from_header.tensors.values()) == network
