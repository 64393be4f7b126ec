"""``load_recipes("MODULE:ATTRIBUTE")``: the engine recipes a model package exports.

The attribute holds one ``EngineRecipe``, a list or tuple of them, or a dict (any mapping) of
them; dotted attributes (``pkg.engines:SETS.small``) are followed. Anything that keeps the spec
from naming recipes raises ``RecipeSpecError``, naming the spec and, for a collection, the
position or key of the first item that is not a recipe. A module that calls ``sys.exit`` while it
is imported (any code, 0 included) raises ``RecipeModuleExit`` naming the module and the code: it
defined no recipes. Other exceptions raised by the module while it is imported (including a
ModuleNotFoundError for one of its own imports) propagate unchanged.
"""

from __future__ import annotations

import importlib
import reprlib
from collections.abc import Mapping
from typing import Any

from tensoracle.engine.recipe import EngineRecipe

EXAMPLE = "mymodel.engines:RECIPES"


class RecipeSpecError(ValueError):
    """A MODULE:ATTRIBUTE spec that names no engine recipes."""


class RecipeModuleExit(RuntimeError):
    """The recipe module called ``sys.exit`` (raised ``SystemExit``) while it was imported."""


def _split(spec: Any) -> tuple[str, str]:
    if not isinstance(spec, str):
        raise RecipeSpecError(f"the recipe spec must be a MODULE:ATTRIBUTE string, not {spec!r}")
    module, colon, attribute = spec.partition(":")
    parts = [*module.split("."), *attribute.split(".")]
    if not colon or not all(part.isidentifier() for part in parts):
        raise RecipeSpecError(
            f"{spec!r} is not MODULE:ATTRIBUTE: a dotted module name, a colon and an attribute "
            f"of the module (for example {EXAMPLE})"
        )
    return module, attribute


def _names_the_module(error: ModuleNotFoundError, module: str) -> bool:
    """Whether ``error`` is about ``module`` itself (or a package above it), not about a module
    that ``module`` imports."""
    missing = error.name or ""
    return bool(missing) and (module == missing or module.startswith(missing + "."))


def _describe(value: Any) -> str:
    return f"{reprlib.repr(value)} ({type(value).__name__})"


def recipes_of(spec: str, value: Any) -> list[EngineRecipe]:
    """The recipes ``value`` holds, found at ``spec`` (named in the errors)."""
    if isinstance(value, EngineRecipe):
        return [value]
    if isinstance(value, list | tuple):
        items = [(f"[{index}]", item) for index, item in enumerate(value)]
    elif isinstance(value, Mapping):
        items = [(f"[{key!r}]", item) for key, item in value.items()]
    else:
        raise RecipeSpecError(
            f"{spec} is {_describe(value)}, not an EngineRecipe, a list or tuple of them, or a "
            "dict of them"
        )
    if not items:
        raise RecipeSpecError(f"{spec} is an empty {type(value).__name__}: it holds no recipe")
    found = []
    for label, item in items:
        if not isinstance(item, EngineRecipe):
            raise RecipeSpecError(f"{spec}{label} is {_describe(item)}, not an EngineRecipe")
        found.append(item)
    return found


def load_recipes(spec: str) -> list[EngineRecipe]:
    """Imports MODULE, reads ATTRIBUTE and returns the recipes it holds, in their order."""
    module_name, attribute = _split(spec)
    try:
        module = importlib.import_module(module_name)
    except SystemExit as error:
        raise RecipeModuleExit(
            f"{spec}: importing module {module_name!r} called sys.exit({error.code!r}) instead "
            "of defining recipes"
        ) from error
    except ModuleNotFoundError as error:
        if not _names_the_module(error, module_name):
            raise
        raise RecipeSpecError(
            f"{spec}: {error} (the module must be installed, or found from the current "
            "directory or PYTHONPATH)"
        ) from error
    value: Any = module
    walked = module_name
    for part in attribute.split("."):
        if not hasattr(value, part):
            owner = f"module {module_name!r}" if walked == module_name else walked
            raise RecipeSpecError(f"{spec}: {owner} has no attribute {part!r}")
        value = getattr(value, part)
        walked += ("." if walked != module_name else ":") + part
    return recipes_of(spec, value)
