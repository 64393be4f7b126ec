"""InputShape, BuilderSettings and EngineBuild: valid declarations and every rejected value."""

from __future__ import annotations

import pytest

from tensoracle import BuilderSettings, EngineBuild, InputShape


def test_fixed_shape_is_its_own_range():
    shape = InputShape.fixed((1, 64, 2))
    assert (shape.minimum, shape.optimum, shape.maximum) == ((1, 64, 2),) * 3
    assert shape.is_fixed


def test_ranged_shape_keeps_each_bound_and_accepts_lists():
    shape = InputShape.ranged([1, 1, 2], (1, 64, 2), (1, 448, 2))
    assert shape.minimum == (1, 1, 2)
    assert shape.optimum == (1, 64, 2)
    assert shape.maximum == (1, 448, 2)
    assert not shape.is_fixed
    assert shape.conditions() == {"min": [1, 1, 2], "opt": [1, 64, 2], "max": [1, 448, 2]}


@pytest.mark.parametrize(
    ("bounds", "words"),
    [
        (((1, 0, 2), (1, 1, 2), (1, 2, 2)), ["InputShape.minimum", "0"]),
        (((1, 1, 2), (1, -1, 2), (1, 2, 2)), ["InputShape.optimum", "-1"]),
        (((1, 1, 2), (1, 1, 2), (1, 2.5, 2)), ["InputShape.maximum", "2.5"]),
        (((1, True, 2), (1, 1, 2), (1, 2, 2)), ["InputShape.minimum", "True"]),
        (((1, 1), (1, 1, 2), (1, 2, 2)), ["same rank", "minimum=(1, 1)"]),
        (((1, 8, 2), (1, 4, 2), (1, 9, 2)), ["dimension 1", "minimum=8", "optimum=4"]),
        (((1, 1, 2), (1, 9, 2), (1, 8, 2)), ["dimension 1", "optimum=9", "maximum=8"]),
        (("abc", (1,), (1,)), ["InputShape.minimum", "'abc'"]),
    ],
)
def test_invalid_ranges_name_field_and_value(bounds, words):
    with pytest.raises(ValueError, match="InputShape") as caught:
        InputShape.ranged(*bounds)
    for word in words:
        assert word in str(caught.value)


def test_invalid_fixed_shape_names_the_value():
    with pytest.raises(ValueError, match=r"InputShape.fixed shape.*-3"):
        InputShape.fixed((1, -3))


def test_builder_settings_defaults_match_the_spec():
    settings = BuilderSettings()
    assert settings.workspace_limit is None
    assert settings.optimization_level == 3
    assert settings.tf32 is False
    assert BuilderSettings(workspace_limit=4 << 30).workspace_limit == 4 << 30


def test_tf32_cannot_be_enabled():
    with pytest.raises(ValueError, match=r"tf32.*True"):
        BuilderSettings(tf32=True)


@pytest.mark.parametrize("limit", [0, -1, True, False, 1.5, 1024.0, "1GiB"])
def test_invalid_workspace_limits_are_rejected(limit):
    with pytest.raises(ValueError, match="workspace_limit") as caught:
        BuilderSettings(workspace_limit=limit)
    assert repr(limit) in str(caught.value) or str(limit) in str(caught.value)


@pytest.mark.parametrize("level", [-1, 6, True, 3.0, "3", None])
def test_invalid_optimization_levels_are_rejected(level):
    with pytest.raises(ValueError, match=r"optimization_level.*0 to 5"):
        BuilderSettings(optimization_level=level)


@pytest.mark.parametrize("level", range(6))
def test_every_backend_optimization_level_is_accepted(level):
    assert BuilderSettings(optimization_level=level).optimization_level == level


def test_engine_build_copies_its_inputs():
    inputs = {"features": InputShape.fixed((1, 2))}
    declaration = EngineBuild(inputs=inputs)
    inputs["other"] = InputShape.fixed((3,))
    assert list(declaration.inputs) == ["features"]
    assert declaration.settings == BuilderSettings()
    assert type(declaration.inputs) is dict  # picklable, as 1.x's dataclass fields are


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"inputs": [("features", InputShape.fixed((1,)))]}, ["EngineBuild.inputs must map"]),
        ({"inputs": {"": InputShape.fixed((1,))}}, ["invalid input name", "''"]),
        ({"inputs": {3: InputShape.fixed((1,))}}, ["invalid input name", "3"]),
        ({"inputs": {"features": (1, 2)}}, ["EngineBuild.inputs['features']", "(1, 2)"]),
        ({"inputs": {}, "settings": {"tf32": False}}, ["EngineBuild.settings", "tf32"]),
    ],
)
def test_invalid_engine_builds_name_field_and_value(arguments, words):
    with pytest.raises(ValueError, match="EngineBuild") as caught:
        EngineBuild(**arguments)
    for word in words:
        assert word in str(caught.value)


@pytest.mark.parametrize("level", [None, "ampere_plus", "same_compute_capability"])
def test_hardware_compatibility_levels_are_accepted(level):
    assert BuilderSettings(hardware_compatibility=level).hardware_compatibility == level
    assert BuilderSettings().hardware_compatibility is None


@pytest.mark.parametrize("level", ["AMPERE_PLUS", "hopper_plus", 1, ["ampere_plus"]])
def test_unknown_hardware_compatibility_levels_name_the_value(level):
    with pytest.raises(ValueError, match=r"BuilderSettings.hardware_compatibility") as caught:
        BuilderSettings(hardware_compatibility=level)
    assert repr(level) in str(caught.value)
    assert "'same_compute_capability'" in str(caught.value)


def test_a_level_with_declared_targets_is_refused_naming_both():
    with pytest.raises(
        ValueError, match=r"hardware_compatibility='ampere_plus', targets=\('sm89',\)"
    ):
        BuilderSettings(hardware_compatibility="ampere_plus", targets=("sm89",))
    settings = BuilderSettings(hardware_compatibility="ampere_plus", targets=("current",))
    assert settings.targets == ("current",)
