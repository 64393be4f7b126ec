"""The one IO comparison (the core's first_io_difference) as the package uses it: each field's
difference, the order, the placement and fixed-input profile rules, and the messages of its two
callers here, check_io (a built or saved engine against its declaration, tensoracle 1.x's text)
and check_deployed_io (a deserialized deployed engine against its manifest)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from engine_helpers import DECLARATION, IO, trt

from tensoracle import EngineIO, EngineIOError, TensorSpec, _core
from tensoracle.engine.deployed import check_deployed_io
from tensoracle.engine.io import check_io, described

PATH = "/cache/x.engine"


def _signature() -> dict[str, Any]:
    """The example engine's IO signature as TensorRT reports it: a ranged input, a fixed input
    whose profile is its shape, and an output."""
    return {
        "tensors": [
            {"name": "features", "mode": "INPUT", "dtype": "FLOAT", "shape": [1, -1, 2],
             "location": "DEVICE", "format": "LINEAR",
             "profile": {"min": [1, 1, 2], "opt": [1, 64, 2], "max": [1, 448, 2]}},
            {"name": "bias", "mode": "INPUT", "dtype": "FLOAT", "shape": [2],
             "location": "DEVICE", "format": "LINEAR",
             "profile": {"min": [2], "opt": [2], "max": [2]}},
            {"name": "result", "mode": "OUTPUT", "dtype": "FLOAT", "shape": [1, -1, 2],
             "location": "DEVICE", "format": "LINEAR"},
        ]
    }  # fmt: skip


def _difference(observed: dict[str, Any], expected: dict[str, Any], **rules: bool) -> str:
    found = _core.first_io_difference(described(observed), described(expected), **rules)
    if found is None:
        return "none"
    return f"{found.tensor} {found.field}: {found.observed} | {found.expected}"


def _changed(tensor: int, **fields: Any) -> dict[str, Any]:
    signature = _signature()
    signature["tensors"][tensor].update(fields)
    return signature


def test_equal_signatures_in_any_order_have_no_difference():
    assert _difference(_signature(), _signature()) == "none"
    reordered = _signature()
    reordered["tensors"].reverse()
    assert _difference(reordered, _signature()) == "none"


@pytest.mark.parametrize(
    ("tensor", "fields", "difference"),
    [
        (2, {"mode": "INPUT"}, "result mode: INPUT | OUTPUT"),
        (2, {"dtype": "HALF"}, "result dtype: HALF | FLOAT"),
        (0, {"shape": [1, -1, 3]}, "features shape: [1, -1, 3] | [1, -1, 2]"),
        (2, {"location": "HOST"}, "result location: HOST | DEVICE"),
        (2, {"format": "CHW32"}, "result format: CHW32 | LINEAR"),
        (
            0,
            {"profile": {"min": [1, 1, 2], "opt": [1, 32, 2], "max": [1, 448, 2]}},
            "features profile: min [1, 1, 2] opt [1, 32, 2] max [1, 448, 2] | "
            "min [1, 1, 2] opt [1, 64, 2] max [1, 448, 2]",
        ),
        (1, {"name": "offset"}, "bias name: no such tensor (engine has ['features', 'offset', "
         "'result']) | 'bias'"),
    ],
)  # fmt: skip
def test_each_field_difference_is_data(tensor, fields, difference):
    assert _difference(_changed(tensor, **fields), _signature()) == difference


def test_the_order_names_then_each_tensors_fields_or_the_profiles_last():
    observed = _changed(0, profile={"min": [1, 1, 2], "opt": [1, 1, 2], "max": [1, 1, 2]})
    observed["tensors"][2]["dtype"] = "HALF"
    assert _difference(observed, _signature()).startswith("features profile:")
    assert _difference(observed, _signature(), profiles_last=True) == "result dtype: HALF | FLOAT"
    observed["tensors"].append(dict(observed["tensors"][2], name="extra"))
    assert _difference(observed, _signature()) == (
        "extra name: 'extra' | only the manifest's tensors ['features', 'bias', 'result']"
    )


def test_placement_is_compared_where_stated_when_asked():
    expected = _signature()
    del expected["tensors"][2]["location"]
    observed = _changed(2, location="HOST")
    assert _difference(observed, expected, placement_where_stated=True) == "none"
    assert _difference(observed, _signature(), placement_where_stated=True) == (
        "result location: HOST | DEVICE"
    )


def test_a_fixed_input_without_a_reported_profile_matches_a_profile_equal_to_its_shape():
    observed = _signature()
    del observed["tensors"][1]["profile"]
    assert _difference(observed, _signature()) == "none"
    ranged = _signature()
    ranged["tensors"][1]["profile"] = {"min": [2], "opt": [2], "max": [3]}
    assert _difference(observed, ranged) == "bias profile: none | min [2] opt [2] max [3]"
    del observed["tensors"][0]["profile"]
    assert _difference(observed, _signature()) == (
        "features profile: none | min [1, 1, 2] opt [1, 64, 2] max [1, 448, 2]"
    )


def test_check_deployed_io_names_the_tensor_field_and_both_values():
    path = "/cache/deployed.engine"
    check_deployed_io(_signature(), _signature(), path)
    with pytest.raises(EngineIOError) as caught:
        check_deployed_io(_changed(2, dtype="HALF"), _signature(), path)
    assert str(caught.value) == (
        "deployed engine '/cache/deployed.engine': tensor 'result' field 'dtype': "
        "observed=HALF, expected=FLOAT"
    )
    with pytest.raises(EngineIOError) as caught:
        check_deployed_io(_changed(1, name="offset"), _signature(), path)
    assert str(caught.value) == (
        "deployed engine '/cache/deployed.engine': tensor 'bias' is only in the manifest: "
        "observed=['features', 'offset', 'result'], expected=['bias', 'features', 'result']"
    )


def test_check_deployed_io_shares_the_fixed_input_profile_rule():
    # TensorRT reports no profile for a fixed input; the manifest records its shape as one.
    observed = _signature()
    del observed["tensors"][1]["profile"]
    check_deployed_io(observed, _signature(), "/cache/deployed.engine")
    # A manifest without location and format records TensorRT's defaults, as C++ reads it.
    expected = _signature()
    for tensor in expected["tensors"]:
        del tensor["location"], tensor["format"]
    check_deployed_io(_signature(), expected, "/cache/deployed.engine")


def _declared_signature() -> dict[str, Any]:
    """The example engine's signature (IO and DECLARATION of engine_helpers)."""
    signature = _signature()
    del signature["tensors"][1]
    return signature


def _check_io_refusal(io: EngineIO, signature: dict[str, Any]) -> str:
    with pytest.raises(EngineIOError) as caught:
        check_io(io, DECLARATION, signature, PATH, "saved header of")
    return str(caught.value)


def _message(tensor: str, field: str, observed: str, expected: str) -> str:
    return (
        f"engine IO mismatch in saved header of '{PATH}': tensor '{tensor}' field '{field}': "
        f"observed={observed}, expected={expected}, path={PATH}"
    )


def test_check_io_keeps_tensoracle_1x_messages():
    check_io(IO, DECLARATION, _declared_signature(), PATH, "saved header of")
    result = IO.outputs["result"]
    cases = [
        (
            EngineIO(IO.inputs, {"result": TensorSpec(trt.float16, result.shape)}),
            _message("result", "dtype", "FLOAT", "HALF"),
        ),
        (
            EngineIO(IO.inputs, {"result": TensorSpec(result.dtype, (1, -1, 3))}),
            _message("result", "shape", "(1, -1, 2)", "(1, -1, 3)"),
        ),
        (
            EngineIO(
                IO.inputs,
                {"result": TensorSpec(result.dtype, result.shape, trt.TensorLocation.HOST)},
            ),
            _message("result", "location", "DEVICE", "HOST"),
        ),
        (
            EngineIO(IO.inputs, {}),
            _message("result", "name", "'result'", "only the declared tensors ['features']"),
        ),
        (
            EngineIO(IO.inputs, {"other": result}),
            _message(
                "other", "name", "no such tensor (engine has ['features', 'result'])", "'other'"
            ),
        ),
    ]
    for io, message in cases:
        assert _check_io_refusal(io, _declared_signature()) == message


def test_check_io_compares_the_profiles_after_every_field_and_the_build_inputs():
    signature = _declared_signature()
    signature["tensors"][0]["profile"]["opt"] = [1, 32, 2]
    profile = _message(
        "features",
        "profile range",
        "((1, 1, 2), (1, 32, 2), (1, 448, 2))",
        "((1, 1, 2), (1, 64, 2), (1, 448, 2))",
    )
    assert _check_io_refusal(IO, signature) == profile
    signature["tensors"][1]["dtype"] = "HALF"  # a later tensor's field comes first
    assert _check_io_refusal(IO, signature) == _message("result", "dtype", "HALF", "FLOAT")
    # The build inputs against the declared inputs come between the two.
    io = EngineIO({}, {**IO.outputs, "features": IO.inputs["features"]})
    fixed = copy.deepcopy(_declared_signature())
    fixed["tensors"][0]["mode"] = "OUTPUT"
    del fixed["tensors"][0]["profile"]
    assert _check_io_refusal(io, fixed) == _message(
        "features", "name (build input)", "only in declaration.inputs", "in both"
    )


def _fields(error: BaseException) -> tuple[Any, ...]:
    return tuple(getattr(error, name) for name in ("path", "field", "observed", "expected"))


def test_python_io_refusals_carry_the_refusal_fields_the_core_names():
    with pytest.raises(EngineIOError) as caught:
        check_deployed_io(_changed(2, dtype="HALF"), _signature(), "/cache/deployed.engine")
    assert _fields(caught.value) == (
        "/cache/deployed.engine",
        "io.tensors[2].dtype",
        "HALF",
        "FLOAT",
    )
    with pytest.raises(EngineIOError) as caught:
        check_deployed_io(_changed(1, name="offset"), _signature(), "/cache/deployed.engine")
    assert _fields(caught.value)[:2] == ("/cache/deployed.engine", "io.tensors[1].name")
    result = IO.outputs["result"]
    io = EngineIO(IO.inputs, {"result": TensorSpec(trt.float16, result.shape)})
    with pytest.raises(EngineIOError) as caught:
        check_io(io, DECLARATION, _declared_signature(), PATH, "saved header of")
    assert _fields(caught.value) == (PATH, "io.tensors[1].dtype", "FLOAT", "HALF")
    assert caught.value.remedy is None
