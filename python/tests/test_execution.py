"""EngineExecution's own rules, checked without a GPU against recording engines and contexts."""

from __future__ import annotations

import gc
import warnings
import weakref

import pytest
from recording_engine import (
    CONTEXT_METHODS,
    ENGINE_METHODS,
    Handle,
    RecordingEngine,
    Tensor,
    features_engine,
    trt,
)

from tensoracle import ShapeTensorOutputWarning
from tensoracle.execution import EngineExecution


def unit_for(engine: RecordingEngine, **handle_kwargs: object) -> EngineExecution:
    return EngineExecution(Handle(engine, **handle_kwargs))


def shaped(engine: RecordingEngine | None = None) -> tuple[EngineExecution, RecordingEngine]:
    engine = engine or features_engine()
    unit = unit_for(engine)
    unit.set_input_shapes({"features": (1, 4, 2)})
    engine.recorder.calls.clear()
    return unit, engine


ADDRESSES = {"features": 0x7000_0000, "result": 0x7000_1000}


@pytest.mark.parametrize(
    ("cls", "methods"),
    [(trt.ICudaEngine, ENGINE_METHODS), (trt.IExecutionContext, CONTEXT_METHODS)],
)
def test_recorded_methods_exist_on_the_real_tensorrt_classes(cls, methods):
    missing = [m for m in methods if not hasattr(cls, m)]
    assert missing == []


# ---- creation ----------------------------------------------------------------------------------


def test_creation_sets_fixed_and_single_point_inputs_but_not_ranged_ones_for_good():
    engine = RecordingEngine(
        [
            Tensor("fixed", "INPUT", (2, 3)),
            Tensor("point", "INPUT", (1, -1), ((1, 5), (1, 5), (1, 5))),
            Tensor("ranged", "INPUT", (1, -1), ((1, 1), (1, 4), (1, 9))),
            Tensor("out", "OUTPUT", (2, 3), rule=lambda shapes: (2, 3)),
        ]
    )
    unit = unit_for(engine)
    sets = [c for c in engine.recorder.calls if c[0] == "set_input_shape"]
    assert ("set_input_shape", "fixed", (2, 3)) in sets
    assert ("set_input_shape", "point", (1, 5)) in sets
    assert unit.ranged_input_names == ("ranged",)
    assert unit.input_names == ("fixed", "point", "ranged")
    assert unit.output_names == ("out",)
    with pytest.raises(RuntimeError, match=r"not set.*'ranged'"):
        unit.get_tensor_shape("out")
    with pytest.raises(RuntimeError, match="not set"):
        unit.enqueue({"fixed": 1, "point": 2, "ranged": 3, "out": 4}, stream=0)


def test_an_engine_without_ranged_inputs_is_ready_at_creation():
    engine = RecordingEngine(
        [Tensor("x", "INPUT", (4,)), Tensor("y", "OUTPUT", (4,), rule=lambda s: (4,))]
    )
    unit = unit_for(engine)
    assert unit.get_tensor_shape("y") == (4,)
    unit.enqueue({"x": 16, "y": 32}, stream=5)
    assert engine.recorder.calls[-1] == ("execute_async_v3", 5)
    unit.set_input_shapes({})  # nothing ranged: an empty setting is complete


@pytest.mark.parametrize(
    ("tensor", "message"),
    [
        (Tensor("x", "INPUT", (4,), location="HOST"), r"'x' is a HOST-location tensor"),
        (Tensor("x", "INPUT", (4,), shape_io=True), r"input 'x' is a shape tensor"),
    ],
)
def test_creation_rejects_host_tensors_and_shape_tensor_inputs_before_making_a_context(
    tensor, message
):
    engine = RecordingEngine([tensor, Tensor("y", "OUTPUT", (4,))])
    with pytest.raises(ValueError, match=message):
        unit_for(engine)
    assert "create_execution_context" not in engine.recorder.names()


def test_creation_rejects_host_outputs():
    engine = RecordingEngine(
        [Tensor("x", "INPUT", (4,)), Tensor("y", "OUTPUT", (4,), location="HOST")]
    )
    with pytest.raises(ValueError, match="'y' is a HOST-location tensor"):
        unit_for(engine)


def test_creation_rejects_outputs_whose_size_depends_on_data_and_releases_the_context():
    engine = RecordingEngine(
        [
            Tensor("x", "INPUT", (-1,), ((1,), (8,), (16,))),
            Tensor("nonzero", "OUTPUT", (1, -1), rule=lambda shapes: (1, -1)),
        ]
    )
    probe = weakref.ref(engine)
    with pytest.raises(ValueError, match=r"data-dependent sizes.*'nonzero' \(1, -1\)"):
        unit_for(engine)
    # The probe set the ranged input to its profile optimum before asking for the output shape.
    assert ("set_input_shape", "x", (8,)) in engine.recorder.calls
    context = weakref.ref(engine.contexts.pop())
    gc.collect()
    assert context() is None
    assert probe() is engine


def test_outputs_that_follow_input_dimensions_are_accepted():
    engine = RecordingEngine(
        [
            Tensor("x", "INPUT", (-1,), ((1,), (8,), (16,))),
            Tensor("twice", "OUTPUT", (-1,), rule=lambda shapes: (2 * shapes["x"][0],)),
        ]
    )
    unit = unit_for(engine)
    unit.set_input_shapes({"x": (3,)})
    assert unit.get_tensor_shape("twice") == (6,)


def test_a_failed_context_creation_raises():
    with pytest.raises(RuntimeError, match="could not create an execution context"):
        unit_for(features_engine(context_fails=True))


def test_shape_tensor_outputs_warn_with_their_names():
    with pytest.warns(ShapeTensorOutputWarning, match=r"'size', 'rows'"):
        unit_for(features_engine(), shape_tensor_outputs=("size", "rows"))


def test_the_warning_as_an_error_stops_creation_before_a_context_exists():
    engine = features_engine()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=ShapeTensorOutputWarning)
        with pytest.raises(ShapeTensorOutputWarning):
            unit_for(engine, shape_tensor_outputs=("size",))
    assert engine.recorder.calls == []


def test_no_warning_without_recorded_shape_outputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unit_for(features_engine())
        EngineExecution(type("OldHandle", (), {"engine": features_engine()})())


# ---- shapes ------------------------------------------------------------------------------------


def test_set_input_shapes_then_concrete_output_shapes_and_dtypes():
    unit, _ = shaped()
    assert unit.get_tensor_shape("result") == (1, 4, 2)
    assert unit.get_tensor_shape("features") == (1, 4, 2)
    assert unit.get_tensor_dtype("result") == trt.float32


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"feature": (1, 4, 2)}, r"'feature' is not an input.*missing ranged inputs 'features'"),
        ({}, "missing ranged inputs 'features'"),
        ({"features": (1, 4)}, r"'features': shape \(1, 4\) has rank 2, expected 3"),
        ({"features": (1, 4.0, 2)}, r"dimensions \[4.0\] that are not nonnegative ints"),
        ({"features": (1, True, 2)}, r"dimensions \[True\]"),
        ({"features": (1, -1, 2)}, r"dimensions \[-1\]"),
        ({"features": 7}, r"shape 7 is not a sequence of ints"),
        ({"features": (1, 4, 2), "result": (1, 4, 2)}, "'result' is not an input"),
    ],
)
def test_invalid_shape_settings_name_the_problem_and_leave_earlier_shapes(shapes, message):
    unit, engine = shaped()
    with pytest.raises(ValueError, match=message):
        unit.set_input_shapes(shapes)
    assert engine.recorder.calls == []  # checked before TensorRT was called
    assert unit.get_tensor_shape("result") == (1, 4, 2)


def test_fixed_inputs_are_not_part_of_a_setting():
    engine = RecordingEngine(
        [
            Tensor("fixed", "INPUT", (2,)),
            Tensor("ranged", "INPUT", (-1,), ((1,), (2,), (3,))),
            Tensor("out", "OUTPUT", (-1,), rule=lambda shapes: shapes["ranged"]),
        ]
    )
    unit = unit_for(engine)
    with pytest.raises(ValueError, match="'fixed' is not a ranged input"):
        unit.set_input_shapes({"fixed": (2,), "ranged": (3,)})


def test_shapes_must_be_a_mapping():
    unit, _ = shaped()
    with pytest.raises(TypeError, match="mapping"):
        unit.set_input_shapes([("features", (1, 4, 2))])


def two_ranged_inputs() -> RecordingEngine:
    profile = ((1,), (4,), (8,))
    return RecordingEngine(
        [
            Tensor("a", "INPUT", (-1,), profile),
            Tensor("b", "INPUT", (-1,), profile),
            Tensor("sum", "OUTPUT", (-1,), rule=lambda shapes: shapes["a"]),
        ]
    )


def test_a_partial_tensorrt_failure_blocks_shapes_and_enqueue_until_a_complete_setting():
    engine = two_ranged_inputs()
    unit = unit_for(engine)
    unit.set_input_shapes({"a": (2,), "b": (2,)})
    with pytest.raises(ValueError, match=r"rejected the shape of 'b' \(99,\).*\(1,\) to \(8,\)"):
        unit.set_input_shapes({"a": (3,), "b": (99,)})
    assert ("set_input_shape", "a", (3,)) in engine.recorder.calls  # a was applied: partial
    with pytest.raises(RuntimeError, match="incomplete"):
        unit.get_tensor_shape("sum")
    engine.recorder.calls.clear()
    with pytest.raises(RuntimeError, match="incomplete"):
        unit.enqueue({"a": 1, "b": 2, "sum": 3}, stream=1)
    assert engine.recorder.calls == []
    unit.get_tensor_dtype("sum")  # dtypes do not depend on shapes
    unit.set_input_shapes({"a": (5,), "b": (5,)})
    assert unit.get_tensor_shape("sum") == (5,)
    unit.enqueue({"a": 1, "b": 2, "sum": 3}, stream=1)


def test_unknown_names_in_queries_are_value_errors():
    unit, _ = shaped()
    with pytest.raises(ValueError, match=r"unknown tensor name 'nope'.*'features', 'result'"):
        unit.get_tensor_shape("nope")
    with pytest.raises(ValueError, match="unknown tensor name 'nope'"):
        unit.get_tensor_dtype("nope")
