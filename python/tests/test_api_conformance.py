"""The tensoracle 1.x public interface, checked name for name: code written against 1.x (positional
construction, keyword names, ``except`` clauses) must run on this package unchanged. Each table
below restates the 1.x interface; a drift in ours fails here."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensoracle
from tensoracle import (
    BuilderSettings,
    EngineBuild,
    EngineHandle,
    EngineIO,
    InputShape,
    OutputComparison,
    ShapeTensorOutputWarning,
    TensorSpec,
    compare_outputs,
)

ALL_1X = [
    "BuilderSettings",
    "CorruptEngineError",
    "EngineBuild",
    "EngineCacheError",
    "EngineConditionError",
    "EngineExecution",
    "EngineHandle",
    "EngineIO",
    "EngineIOError",
    "InputShape",
    "OutputComparison",
    "PluginLibraryError",
    "ShapeTensorOutputWarning",
    "TensorSpec",
    "build_serialized_engine",
    "compare_outputs",
    "open_engine",
]

EMPTY = dataclasses.MISSING


def test_every_1x_name_is_exported():
    assert set(ALL_1X) <= set(tensoracle.__all__)
    for name in ALL_1X:
        assert getattr(tensoracle, name) is not None


@pytest.mark.parametrize(
    ("cls", "fields"),
    [
        (InputShape, [("minimum", EMPTY), ("optimum", EMPTY), ("maximum", EMPTY)]),
        (BuilderSettings, [("workspace_limit", None), ("optimization_level", 3), ("tf32", False)]),
        (EngineBuild, [("inputs", EMPTY), ("settings", "factory")]),
        (TensorSpec, [("dtype", EMPTY), ("shape", EMPTY), ("location", None), ("format", None)]),
        (EngineIO, [("inputs", EMPTY), ("outputs", EMPTY)]),
        (
            EngineHandle,
            [("engine", EMPTY), ("runtime", EMPTY), ("path", EMPTY), ("_shape_tensor_outputs", ())],
        ),
        (
            OutputComparison,
            [
                ("candidate_nonfinite_count", EMPTY),
                ("reference_nonfinite_count", EMPTY),
                ("max_absolute_error", None),
                ("relative_l2_error", None),
                ("cosine_similarity", None),
                ("outside_tolerance_count", None),
                ("outside_tolerance_fraction", None),
                ("mismatch_count", None),
                ("mismatch_fraction", None),
            ],
        ),
    ],
)
def test_dataclass_fields_come_in_the_1x_order_with_its_defaults(cls, fields):
    assert dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    ours = dataclasses.fields(cls)
    assert [field.name for field in ours[: len(fields)]] == [name for name, _ in fields]
    for field, (name, default) in zip(ours, fields, strict=False):
        if default == "factory":
            assert field.default_factory is not EMPTY, name
        else:
            assert field.default == default, name
    # Fields we add come after the 1.x ones and have defaults, so positional 1.x calls still fit.
    for field in ours[len(fields) :]:
        assert field.default is not EMPTY or field.default_factory is not EMPTY, field.name


def test_output_comparison_has_slots_and_is_built_positionally():
    assert "__slots__" in OutputComparison.__dict__
    made = OutputComparison(0, 0, 0.5, 0.1, 0.99)
    assert (made.max_absolute_error, made.relative_l2_error, made.cosine_similarity) == (
        0.5,
        0.1,
        0.99,
    )
    assert made.mismatch_count is None


def parameters(function) -> list[tuple[str, str, object]]:
    return [
        (p.name, p.kind.name, p.default) for p in inspect.signature(function).parameters.values()
    ]


E = inspect.Parameter.empty
POS = "POSITIONAL_OR_KEYWORD"
KW = "KEYWORD_ONLY"


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (
            tensoracle.build_serialized_engine,
            [("graph", POS, E), ("declaration", POS, E), ("plugins", KW, ()), ("logger", KW, None)],
        ),
        (
            tensoracle.open_engine,
            [
                ("graph", POS, E),
                ("declaration", POS, E),
                ("name", KW, E),
                ("graph_version", KW, E),
                ("weights", KW, E),
                ("io", KW, E),
                ("plugins", KW, ()),
                ("force_rebuild", KW, False),
                ("logger", KW, None),
            ],
        ),
        (
            compare_outputs,
            [("candidate", POS, E), ("reference", POS, E), ("atol", KW, None), ("rtol", KW, None)],
        ),
        (InputShape.fixed, [("shape", POS, E)]),
        (InputShape.ranged, [("minimum", POS, E), ("optimum", POS, E), ("maximum", POS, E)]),
        (EngineHandle.create_execution, [("self", POS, E)]),
    ],
)
def test_signatures_start_with_the_1x_parameters(function, expected):
    ours = parameters(function)
    assert ours[: len(expected)] == expected
    # Our additions are keyword-only with defaults.
    for name, kind, default in ours[len(expected) :]:
        assert kind == KW, name
        assert default is not E, name


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("__init__", [("self", POS, E), ("handle", POS, E)]),
        ("set_input_shapes", [("self", POS, E), ("shapes", POS, E)]),
        ("get_tensor_shape", [("self", POS, E), ("name", POS, E)]),
        ("get_tensor_dtype", [("self", POS, E), ("name", POS, E)]),
        ("enqueue", [("self", POS, E), ("addresses", POS, E), ("stream", KW, E)]),
        ("close", [("self", POS, E)]),
        ("__enter__", [("self", POS, E)]),
    ],
)
def test_execution_methods_have_the_1x_signatures(method, expected):
    assert parameters(getattr(tensoracle.EngineExecution, method)) == expected


def test_the_converter_has_the_1x_signature():
    from tensoracle.convert import pth_to_safetensors

    assert parameters(pth_to_safetensors) == [("source", POS, E), ("destination", POS, E)]


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("EngineCacheError", ValueError),
        ("CorruptEngineError", tensoracle.EngineCacheError),
        ("EngineConditionError", tensoracle.EngineCacheError),
        ("EngineIOError", tensoracle.EngineCacheError),
        ("PluginLibraryError", ValueError),
        ("ShapeTensorOutputWarning", UserWarning),
    ],
)
def test_exceptions_have_the_1x_bases(name, base):
    cls = getattr(tensoracle, name)
    assert base in cls.__bases__
    if not issubclass(cls, Warning):
        assert issubclass(cls, ValueError)  # every tensoracle error is a ValueError


def test_declarations_are_built_as_1x_code_builds_them():
    shape = InputShape(minimum=(1, 2), optimum=(1, 4), maximum=(1, 8))
    assert (shape.minimum, shape.optimum, shape.maximum) == ((1, 2), (1, 4), (1, 8))
    assert InputShape.ranged(minimum=(1,), optimum=(2,), maximum=(3,)).maximum == (3,)
    assert InputShape.fixed((1, 3)) == InputShape((1, 3), (1, 3), (1, 3))
    with pytest.raises(ValueError, match="minimum"):
        InputShape((), (), ())
    with pytest.raises(TypeError, match="precision"):
        EngineBuild({"x": shape}, precision="fp16")  # type: ignore[call-arg]
    build = EngineBuild({"x": shape}, BuilderSettings(1 << 20, 2))
    assert build.settings == BuilderSettings(workspace_limit=1 << 20, optimization_level=2)


def test_a_user_wraps_an_engine_built_elsewhere_in_an_engine_handle(tmp_path: Path):
    engine, runtime = object(), object()
    handle = EngineHandle(engine, runtime, tmp_path / "mine.engine")
    assert (handle.engine, handle.runtime, handle.path) == (
        engine,
        runtime,
        tmp_path / "mine.engine",
    )
    assert handle.shape_tensor_outputs == []
    assert "_shape_tensor_outputs" not in repr(handle)
    with pytest.raises(dataclasses.FrozenInstanceError):
        handle.engine = None  # type: ignore[misc]


def test_compare_outputs_follows_the_1x_rules():
    with pytest.raises(TypeError):
        compare_outputs([1.0], np.array([1.0]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="without rtol"):
        compare_outputs(np.zeros(2), np.zeros(2), atol=0.1)
    with pytest.raises(ValueError, match="float"):
        compare_outputs(np.zeros(2), np.zeros(2), atol="x", rtol=0)
    result = compare_outputs(np.array([1.0, 2.0]), np.array([1.0, 2.5]), atol="0.1", rtol=False)
    assert result.max_absolute_error == 0.5
    assert result.outside_tolerance_count == 1
    mixed = compare_outputs(np.array([1, 2], np.uint8), np.array([1, -2], np.int8))
    assert mixed.mismatch_count == 1
    assert mixed.max_absolute_error is None


def test_the_shape_tensor_warning_says_what_1x_says():
    from tensoracle.errors import shape_output_message

    text = shape_output_message(["size", "rows"])
    for part in ("'size'", "'rows'", "shape tensor", "create_execution()", "cannot", "crash"):
        assert part in text
    assert "process" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShapeTensorOutputWarning)
        with pytest.raises(ShapeTensorOutputWarning):
            warnings.warn(ShapeTensorOutputWarning(text), stacklevel=1)


def test_importing_tensoracle_loads_no_backend_torch_or_triton():
    code = (
        "import sys, tensoracle\n"
        "from tensoracle import open_engine, build_serialized_engine\n"
        "print(sorted(m for m in ('tensorrt', 'tensorrt_rtx', 'torch', 'triton',"
        " 'tensoracle.producer') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_declarations_pickle_and_copy_as_1x_dataclasses_do():
    import copy
    import pickle

    declaration = EngineBuild({"x": InputShape.fixed((1, 3))}, BuilderSettings(1 << 20))
    assert pickle.loads(pickle.dumps(declaration)) == declaration
    assert copy.deepcopy(declaration) == declaration
    assert dataclasses.asdict(declaration)["inputs"]["x"]["minimum"] == (1, 3)
    io = EngineIO({}, {})
    assert pickle.loads(pickle.dumps(io)) == io
