"""EngineRecipe: checked when made, open/prepare as open_engine/prepare_engine with the recipe's
arguments (real TensorRT-RTX builds of the features + bias graph), with_targets, and
load_recipes of a model package module."""

from __future__ import annotations

import dataclasses
import inspect
import uuid
from pathlib import Path

import pytest
from engine_helpers import (
    DECLARATION,
    IO,
    make_graph,
    raising_graph,
    skip_where_the_gpu_is_refused,
    write_weights,
)

import tensoracle
from tensoracle import EngineHandle, EngineRecipe, PreparedEngine, open_engine, prepare_engine
from tensoracle.engine.recipe_loader import RecipeSpecError, load_recipes

RECIPE_FIELDS = ("graph", "declaration", "name", "graph_version", "weights", "io", "plugins")


def recipe(weights: Path, calls: list[int] | None = None, **changes) -> EngineRecipe:
    arguments = {
        "name": "tiny",
        "graph_version": "1",
        "weights": [weights],
        "io": IO,
        **changes,
    }
    return EngineRecipe(make_graph(weights, calls), DECLARATION, **arguments)


def test_a_recipe_is_a_public_frozen_value_that_keeps_its_paths_as_given(tmp_path: Path):
    relative, absolute = Path("weights/model.safetensors"), tmp_path / "other.safetensors"
    made = EngineRecipe(
        raising_graph,
        DECLARATION,
        name="tiny",
        graph_version="1",
        weights=[relative, absolute],
        io=IO,
        plugins=[Path("libplugin.so")],
    )

    assert EngineRecipe.__module__ == "tensoracle"
    assert "EngineRecipe" in tensoracle.__all__
    assert made.weights == (relative, absolute)
    assert made.weights[0] is relative  # not resolved: relative to the working directory of a call
    assert made.plugins == (Path("libplugin.so"),)
    assert made.declaration is DECLARATION
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        EngineRecipe(raising_graph, DECLARATION, "tiny", "1", [absolute], IO)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"graph": "not a function"}, "graph must be a function taking the network definition"),
        (
            {"declaration": {"features": None}},
            "declaration must be an EngineBuild, not {'features'",
        ),
        ({"name": ""}, "EngineRecipe: name must be a non-empty string, not ''"),
        ({"name": 7}, "EngineRecipe: name must be a non-empty string, not 7"),
        ({"graph_version": 3}, "EngineRecipe 'tiny': graph_version must be a non-empty string"),
        ({"weights": "model.safetensors"}, "weights must be a sequence of paths, not 'model.saf"),
        ({"weights": [Path("a.safetensors"), 3]}, "weights holds 3, which is not a path"),
        ({"io": {"inputs": {}}}, "EngineRecipe 'tiny': io must be an EngineIO, not {'inputs'"),
        ({"plugins": "libplugin.so"}, "plugins must be a sequence of paths, not 'libplugin.so'"),
        ({"plugins": [None]}, "EngineRecipe 'tiny': plugins holds None, which is not a path"),
        ({"name": "bad\udc80name"}, "name"),
    ],
)
def test_construction_refuses_each_bad_field_naming_it_and_the_value(
    tmp_path: Path, changes, message
):
    arguments = {
        "graph": raising_graph,
        "declaration": DECLARATION,
        "name": "tiny",
        "graph_version": "1",
        "weights": [tmp_path / "model.safetensors"],
        "io": IO,
        **changes,
    }
    graph, declaration = arguments.pop("graph"), arguments.pop("declaration")

    with pytest.raises(ValueError, match=r"^EngineRecipe") as raised:
        EngineRecipe(graph, declaration, **arguments)

    assert message in str(raised.value)


@pytest.mark.backend
def test_prepare_builds_once_and_is_prepare_engine_with_the_recipe_s_arguments(
    tmp_path: Path, engine_cache: Path
):
    weights = write_weights(tmp_path / "model.safetensors")
    calls: list[int] = []
    made = recipe(weights, calls)

    first = made.prepare(progress=False)
    direct = prepare_engine(
        raising_graph, DECLARATION, name="tiny", graph_version="1", weights=[weights], io=IO
    )
    again = made.prepare()

    assert isinstance(first, PreparedEngine)
    assert first.built
    assert first.path.parent == engine_cache
    assert not direct.built
    assert direct.path == first.path == again.path
    assert not again.built
    assert calls == [1]

    events = []
    forced = made.prepare(force_rebuild=True, progress=events.append, remote="")
    assert forced.built
    assert calls == [1, 1]
    assert [event.phase for event in events if event.kind == "finish"][-1] == "Building engine"


@pytest.mark.backend
def test_open_returns_open_engine_s_handle(tmp_path: Path, engine_cache: Path):
    skip_where_the_gpu_is_refused()
    weights = write_weights(tmp_path / "model.safetensors")
    made = recipe(weights)

    handle = made.open(progress=False)
    direct = open_engine(
        raising_graph, DECLARATION, name="tiny", graph_version="1", weights=[weights], io=IO
    )

    assert isinstance(handle, EngineHandle)
    assert handle.built
    assert direct.path == handle.path
    assert not made.open().built


@pytest.mark.parametrize(
    ("method", "function"), [("open", open_engine), ("prepare", prepare_engine)]
)
def test_the_options_are_exactly_the_rest_of_open_engine_s(method, function):
    def options(callable_, skip):
        return [
            (parameter.name, parameter.kind, parameter.default)
            for parameter in inspect.signature(callable_).parameters.values()
            if parameter.name not in skip
        ]

    ours = options(getattr(EngineRecipe, method), ("self",))
    theirs = options(function, RECIPE_FIELDS)

    assert ours == theirs
    assert {kind for _name, kind, _default in ours} == {inspect.Parameter.KEYWORD_ONLY}


@pytest.mark.parametrize("method", ["open", "prepare"])
def test_an_unknown_option_is_a_type_error_naming_it(tmp_path: Path, method):
    made = recipe(tmp_path / "model.safetensors")
    call = getattr(made, method)

    with pytest.raises(TypeError, match="force_rebuilt"):
        call(force_rebuilt=True)
    with pytest.raises(TypeError, match="weights"):
        call(weights=[tmp_path / "other.safetensors"])  # the recipe's own fields are fixed
    with pytest.raises(TypeError):
        call(True)  # keyword-only, as in open_engine


def test_with_targets_replaces_only_the_declared_targets(tmp_path: Path):
    made = recipe(tmp_path / "model.safetensors")

    changed = made.with_targets(["sm86", "sm120"])

    assert changed.declaration.settings.targets == ("sm86", "sm120")
    assert made.declaration.settings.targets is None  # the original is unchanged
    assert dataclasses.replace(changed.declaration.settings, targets=None) == (DECLARATION.settings)
    assert changed.declaration.inputs == DECLARATION.inputs
    assert changed.graph is made.graph
    assert (changed.name, changed.weights, changed.io) == (made.name, made.weights, made.io)
    assert changed.with_targets(None).declaration.settings.targets is None
    with pytest.raises(ValueError, match="holds 'SM89'"):
        made.with_targets(["SM89"])
    with pytest.raises(ValueError, match="single string 'sm89'"):
        made.with_targets("sm89")


@pytest.mark.backend
def test_targets_are_part_of_the_engine_a_recipe_prepares(tmp_path: Path, engine_cache: Path):
    made = recipe(write_weights(tmp_path / "model.safetensors"))

    for_86 = made.with_targets(["sm86"]).prepare(progress=False)
    for_89 = made.with_targets(["sm89"]).prepare(progress=False)

    assert for_86.built
    assert for_89.built
    assert for_86.path != for_89.path
    assert not made.with_targets(["sm86"]).prepare(progress=False).built


@pytest.mark.backend
def test_relative_weights_are_resolved_in_the_working_directory_of_each_call(
    tmp_path: Path, engine_cache: Path, monkeypatch: pytest.MonkeyPatch
):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    write_weights(first / "model.safetensors", (0.5, -1.0))
    write_weights(second / "model.safetensors", (2.0, 3.0))
    made = recipe(Path("model.safetensors"))

    monkeypatch.chdir(first)
    in_first = made.prepare(progress=False)
    monkeypatch.chdir(second)
    in_second = made.prepare(progress=False)

    assert in_first.built
    assert in_second.built  # other weights, another engine
    assert in_first.path != in_second.path


PACKAGE = """
from pathlib import Path

from engine_helpers import DECLARATION, IO, raising_graph

from tensoracle import EngineRecipe

HERE = Path(__file__).parent


def recipe(name):
    return EngineRecipe(
        raising_graph,
        DECLARATION,
        name=name,
        graph_version="1",
        weights=[HERE / "model.safetensors"],
        io=IO,
    )


ONE = recipe("one")
LIST = [recipe("a"), recipe("b")]
TUPLE = (recipe("t"),)
DICT = {"small": recipe("s"), "large": recipe("l")}


class Sets:
    SMALL = [recipe("x")]


EMPTY = []
NUMBER = 7
GENERATOR = (item for item in LIST)
MIXED = [recipe("a"), "oops"]
MIXED_DICT = {"good": recipe("g"), "bad": 3}
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A model package module on sys.path, under a name of its own; returns the name."""
    name = f"recipes_{uuid.uuid4().hex[:12]}"
    (tmp_path / f"{name}.py").write_text(PACKAGE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.mark.parametrize(
    ("attribute", "names"),
    [
        ("ONE", ["one"]),
        ("LIST", ["a", "b"]),
        ("TUPLE", ["t"]),
        ("DICT", ["s", "l"]),
        ("Sets.SMALL", ["x"]),
    ],
)
def test_load_recipes_reads_a_recipe_a_list_a_tuple_or_a_dict(package: str, attribute, names):
    loaded = load_recipes(f"{package}:{attribute}")

    assert [item.name for item in loaded] == names
    assert all(isinstance(item, EngineRecipe) for item in loaded)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "'nocolon' is not MODULE:ATTRIBUTE"),
        ("{package}:", "is not MODULE:ATTRIBUTE"),
        (":LIST", "':LIST' is not MODULE:ATTRIBUTE"),
        ("{package}:LIST:ONE", "is not MODULE:ATTRIBUTE"),
        ("my package:LIST", "is not MODULE:ATTRIBUTE"),
        ("no_such_module_of_recipes:RECIPES", "No module named 'no_such_module_of_recipes'"),
        ("no_such_package_x.engines:RECIPES", "No module named 'no_such_package_x'"),
        ("{package}:MISSING", "{package}:MISSING: module '{package}' has no attribute 'MISSING'"),
        ("{package}:Sets.NOPE", "{package}:Sets has no attribute 'NOPE'"),
        ("{package}:NUMBER", "{package}:NUMBER is 7 (int), not an EngineRecipe, a list or tuple"),
        ("{package}:GENERATOR", "(generator), not an EngineRecipe"),
        ("{package}:EMPTY", "{package}:EMPTY is an empty list: it holds no recipe"),
        ("{package}:MIXED", "{package}:MIXED[1] is 'oops' (str), not an EngineRecipe"),
        ("{package}:MIXED_DICT", "{package}:MIXED_DICT['bad'] is 3 (int), not an EngineRecipe"),
    ],
)
def test_load_recipes_says_why_a_spec_names_no_recipes(package: str, spec, message):
    with pytest.raises(RecipeSpecError) as raised:
        load_recipes(spec.format(package=package))

    assert isinstance(raised.value, ValueError)
    assert message.format(package=package) in str(raised.value)


def test_errors_of_the_package_s_own_import_propagate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    broken, needy = (f"{kind}_{uuid.uuid4().hex[:12]}" for kind in ("broken", "needy"))
    (tmp_path / f"{broken}.py").write_text('raise RuntimeError("the package is broken")\n')
    (tmp_path / f"{needy}.py").write_text("import a_dependency_nobody_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    with pytest.raises(RuntimeError, match="the package is broken"):
        load_recipes(f"{broken}:RECIPES")
    with pytest.raises(ModuleNotFoundError, match="a_dependency_nobody_installed") as raised:
        load_recipes(f"{needy}:RECIPES")
    assert not isinstance(raised.value, RecipeSpecError)


def test_the_example_the_errors_suggest_is_a_valid_spec():
    from tensoracle.engine.recipe_loader import EXAMPLE

    with pytest.raises(RecipeSpecError, match="No module named 'mymodel'"):  # syntax accepted
        load_recipes(EXAMPLE)
