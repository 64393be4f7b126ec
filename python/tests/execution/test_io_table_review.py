"""The execution rules added after the review against TensorRT's API, on plain IO data.

Tables come from real TensorRT-RTX networks (built without a GPU) or from saved headers: RTX
builds engines with padded IO formats, in-place (aliased) outputs and shape-tensor outputs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from backend_requirement import rtx_module
from gpu_engines import (
    FEATURES_PROFILE,
    SHAPE_OUTPUT_PROFILE,
    build_plan,
    features_result,
    kv_cache,
    shape_tensor_output,
    vectorized_io,
)
from io_tables import tensors_from_network, tensors_from_signature

from tensoracle.execution.io_table import (
    IOTable,
    IOTensor,
    capture_problem,
    shape_inference_error,
    shape_of,
    shape_outputs,
)


@pytest.fixture(autouse=True)
def rtx_backend(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The networks are TensorRT-RTX's, which builds without a GPU."""
    trt = rtx_module()
    monkeypatch.setenv("TENSORACLE_BACKEND", "tensorrt_rtx")
    return trt


def raises_exactly(error: type[Exception], text: str) -> Any:
    return pytest.raises(error, match=f"^{re.escape(text)}$")


NOT_RUNNABLE = "the engine cannot be run by an execution unit: "

# ---- 1. shapes ---------------------------------------------------------------------------------


def test_shapes_become_plain_tuples(rtx_backend):
    assert shape_of(rtx_backend.Dims([1, 4, 2]), "x") == (1, 4, 2)
    assert shape_of(rtx_backend.Dims([]), "x") == ()  # a real scalar stays a scalar
    assert shape_of([3, 0], "x") == (3, 0)


class NegativeRank:
    """A sequence of length -1, which is how TensorRT's invalid Dims{-1, {}} reaches Python."""

    def __len__(self) -> int:
        return -1

    def __getitem__(self, index: int) -> int:
        raise IndexError(index)


def test_an_invalid_shape_of_rank_minus_one_is_an_error_not_a_scalar():
    with pytest.raises(ValueError, match="should return >= 0"):
        len(NegativeRank())  # Python itself refuses the length
    with raises_exactly(
        RuntimeError,
        "TensorRT reported no valid shape for output 'total' (rank -1): its shape cannot be "
        "computed from the shapes that are set",
    ):
        shape_of(NegativeRank(), "output 'total'")


def test_shape_inference_failures_and_unspecified_tensors_are_named():
    assert shape_inference_error([], None) is None
    error = shape_inference_error([], "infer_shapes error code: -1; broadcast dimensions differ")
    assert isinstance(error, RuntimeError)
    assert str(error) == (
        "TensorRT shape inference rejected the input shapes: infer_shapes error code: -1; "
        "broadcast dimensions differ"
    )
    assert str(shape_inference_error(["a", "b"], None)) == (
        "TensorRT shape inference reports tensors not specified: 'a', 'b'"
    )


# ---- 2. formats --------------------------------------------------------------------------------


def test_rtx_builds_padded_io_formats_and_the_table_refuses_them():
    assert build_plan(vectorized_io)[:4] == b"vtrt"  # TensorRT-RTX accepts CHW32 and HWC8 IO
    tensors = tensors_from_network(vectorized_io)
    assert [(t.name, t.format) for t in tensors] == [("x", "CHW32"), ("y", "HWC8")]
    with raises_exactly(
        ValueError,
        NOT_RUNNABLE + "'x' has the IO format CHW32 (only LINEAR buffers, row-major and unpadded, "
        "can be sized from the tensor shape); 'y' has the IO format HWC8 (only LINEAR buffers, "
        "row-major and unpadded, can be sized from the tensor shape)",
    ):
        IOTable(tensors)


def test_a_saved_header_with_a_padded_format_gives_a_refused_table(engine_cache, rtx_backend):
    from tensoracle import (
        BuilderSettings,
        EngineBuild,
        EngineIO,
        InputShape,
        TensorSpec,
        open_engine,
    )

    trt = rtx_backend
    handle = open_engine(
        lambda network: vectorized_io(trt, network),
        EngineBuild(inputs={"x": InputShape.fixed((1, 3, 8, 8))}, settings=BuilderSettings()),
        name="formats",
        graph_version="1",
        weights=(),
        io=EngineIO(
            inputs={"x": TensorSpec(trt.float16, (1, 3, 8, 8), format=trt.TensorFormat.CHW32)},
            outputs={"y": TensorSpec(trt.float16, (1, 3, 8, 8), format=trt.TensorFormat.HWC8)},
        ),
    )
    tensors = tensors_from_signature(handle.references["io"])
    assert [t.format for t in tensors] == ["CHW32", "HWC8"]
    with pytest.raises(ValueError, match=r"'x' has the IO format CHW32 .*'y' has the IO format"):
        IOTable(tensors)


def test_linear_tables_from_saved_headers_still_pass(engine_cache, tmp_path):
    from engine_helpers import DECLARATION, IO, make_graph, write_weights

    from tensoracle import open_engine

    weights = write_weights(tmp_path / "model.safetensors")
    handle = open_engine(
        make_graph(weights), DECLARATION, name="linear", graph_version="1", weights=(weights,),
        io=IO,
    )  # fmt: skip
    table = IOTable(tensors_from_signature(handle.references["io"]))
    assert {t.format for t in table.tensors.values()} == {"LINEAR"}


# ---- 3. alignment ------------------------------------------------------------------------------

FEATURES = IOTable(
    [
        IOTensor("features", "INPUT", (1, -1, 2), profile=FEATURES_PROFILE["features"]),
        IOTensor("result", "OUTPUT", (1, -1, 2)),
    ]
)


def test_addresses_aligned_to_256_bytes_pass():
    FEATURES.check_enqueue({"features": 256, "result": 0x7F00_0000_0100}, 0)


@pytest.mark.parametrize(
    ("offset", "shown"), [(4, "0x7f0000000104"), (128, "0x7f0000000180"), (255, "0x7f00000001ff")]
)
def test_a_misaligned_address_is_refused_naming_the_tensor_and_the_address(offset, shown):
    # An offset view such as x[1:] of a float32 CuPy array starts 4 bytes into its allocation.
    addresses = {"features": 0x7F00_0000_0000, "result": 0x7F00_0000_0100 + offset}
    with raises_exactly(
        ValueError,
        f"invalid tensor addresses: 'result': address {shown} is not a multiple of 256 "
        "(TensorRT needs 256-byte aligned tensors)",
    ):
        FEATURES.check_enqueue(addresses, 0)


# ---- 5. shape-tensor outputs -------------------------------------------------------------------


def test_rtx_builds_outputs_marked_for_shapes_and_the_table_lists_them():
    assert build_plan(shape_tensor_output, SHAPE_OUTPUT_PROFILE)[:4] == b"vtrt"
    table = IOTable(tensors_from_network(shape_tensor_output, SHAPE_OUTPUT_PROFILE))
    assert table.shape_outputs == ("size",)  # TensorRT-RTX marks it is_shape_tensor
    assert table.outputs == ("size", "copy")


def test_shape_outputs_are_found_before_the_table_refuses_the_engine():
    # The warning comes first even where the engine is refused (a HOST-location shape output).
    tensors = [
        IOTensor("data", "INPUT", (2, 3)),
        IOTensor("size", "OUTPUT", (2,), location="HOST", is_shape_io=True),
        IOTensor("copy", "OUTPUT", (2, 3)),
    ]
    assert shape_outputs(tensors) == ("size",)
    with raises_exactly(ValueError, NOT_RUNNABLE + "'size' is a HOST-location tensor"):
        IOTable(tensors)


def test_ordinary_outputs_are_not_shape_outputs():
    table = IOTable(tensors_from_network(features_result, FEATURES_PROFILE))
    assert table.shape_outputs == ()


# ---- 7. aliased outputs ------------------------------------------------------------------------

KV_ADDRESSES = {"cache": 0x1000, "update": 0x2000, "write_indices": 0x3000, "cache_out": 0x1000}


def test_rtx_builds_an_in_place_output_and_the_table_pairs_it_with_its_input():
    assert build_plan(kv_cache)[:4] == b"vtrt"
    table = IOTable(tensors_from_network(kv_cache))
    assert table.aliases == (("cache_out", "cache"),)
    table.check_enqueue(KV_ADDRESSES, 0)


def test_an_aliased_output_at_another_address_is_refused():
    table = IOTable(tensors_from_network(kv_cache))
    with raises_exactly(
        ValueError,
        "invalid tensor addresses: output 'cache_out' is written in place of input 'cache': "
        "its address must be 0x1000, got 0x4000",
    ):
        table.check_enqueue({**KV_ADDRESSES, "cache_out": 0x4000}, 0)


def test_only_outputs_alias_and_only_inputs_are_aliased():
    text = "IOTensor 'a': only outputs alias an input, not a INPUT tensor"
    with raises_exactly(ValueError, text):
        IOTensor("a", "INPUT", (4,), aliased_input="b")
    with raises_exactly(ValueError, NOT_RUNNABLE + "output 'o' aliases 'p', not an input"):
        IOTable(
            [
                IOTensor("i", "INPUT", (4,)),
                IOTensor("p", "OUTPUT", (4,)),
                IOTensor("o", "OUTPUT", (4,), aliased_input="p"),
            ]
        )


# ---- 4. CUDA graph capture on TensorRT-RTX -----------------------------------------------------


def test_capture_needs_a_capturable_context():
    problem = capture_problem(False, "EAGER", ())
    assert problem is not None
    assert "REQUIRE_USER_ALLOCATION" in problem


def test_lazy_specialization_with_ranged_inputs_is_not_captured():
    assert capture_problem(True, "LAZY", ("features",)) == (
        "TensorRT-RTX specializes kernels lazily for the ranged inputs 'features': "
        "a captured graph would keep the fallback kernels"
    )


@pytest.mark.parametrize(
    ("specialization", "ranged"), [("LAZY", ()), ("EAGER", ("a",)), ("NONE", ("a",))]
)
def test_capturable_contexts_without_lazy_ranged_kernels_are_captured(specialization, ranged):
    assert capture_problem(True, specialization, ranged) is None


def test_the_specialization_strategies_named_are_the_installed_rtx_ones(rtx_backend):
    strategies = rtx_backend.DynamicShapesKernelSpecializationStrategy.__members__
    assert {"LAZY", "EAGER", "NONE"} == set(strategies)
    assert "REQUIRE_USER_ALLOCATION" in rtx_backend.BuilderFlag.__members__
