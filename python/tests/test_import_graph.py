"""No import cycles in the tensoracle package.

The graph is grimp's (the engine of import-linter), built from the package that ``import
tensoracle`` finds, and it holds every import statement of the package's modules:

- module-level imports, which run when the module is imported;
- imports inside functions, which run later but still tie the two modules together: the
  function's module cannot be understood, tested or moved without the other;
- imports under ``if TYPE_CHECKING:``, which never run, but a type named across modules in both
  directions is the same circle for a reader and for mypy, and it is what breaking a runtime
  circle by turning one side into a type-only import would hide. They count.

Two things Python does are not edges of their own:

- importing ``a.b.c`` first imports the packages ``a`` and ``a.b``. Every package whose
  ``__init__`` re-exports its children would be a cycle with them; that is how packages work,
  and a child reading a name of its half-initialised parent is still caught, because it is an
  explicit ``from a import name``.
- ``from tensoracle import _core`` names a compiled extension module, which grimp, reading only
  ``.py`` files, takes for an import of the package ``tensoracle`` itself. ``import_graph``
  corrects this: such an import is an edge to the extension module (a leaf), and an edge to the
  package only where the statement also names something defined in its ``__init__``.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import itertools
import textwrap
from pathlib import Path

import grimp
import pytest

Cycle = tuple[str, ...]


def _package_folder(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None, f"{package} is not importable"
    assert spec.origin is not None, f"{package} has no __init__.py"
    return Path(spec.origin).parent


def _extension_modules(package: str, folder: Path) -> set[str]:
    """The compiled extension modules of ``package``, by their dotted names."""
    suffixes = sorted(importlib.machinery.EXTENSION_SUFFIXES, key=len, reverse=True)
    found = set()
    for path in folder.rglob("*"):
        suffix = next((s for s in suffixes if path.name.endswith(s)), None)
        if suffix is None or not path.is_file():
            continue
        relative = path.relative_to(folder).parent.parts
        found.add(".".join((package, *relative, path.name.removesuffix(suffix))))
    return found


def _source(module: str, folder: Path) -> tuple[Path, bool]:
    """The file of ``module`` and whether it is a package's ``__init__``."""
    base = folder.joinpath(*module.split(".")[1:])
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    return base.with_suffix(".py"), False


def _from_imports(module: str, folder: Path) -> dict[int, list[tuple[str, str]]]:
    """Line number → (resolved module, name) for each ``from X import name`` in ``module``."""
    path, is_package = _source(module, folder)
    parts = module.split(".") if is_package else module.split(".")[:-1]
    found: dict[int, list[tuple[str, str]]] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = parts[: len(parts) - node.level + 1] if node.level else []
        source = ".".join([*base, *([node.module] if node.module else [])])
        found.setdefault(node.lineno, []).extend((source, alias.name) for alias in node.names)
    return found


def import_graph(package: str) -> grimp.ImportGraph:
    """grimp's graph of ``package`` (TYPE_CHECKING imports included), with the imports of its
    compiled extension modules pointed at them (see the module docstring)."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    folder = _package_folder(package)
    extensions = _extension_modules(package, folder)
    for extension in sorted(extensions):
        graph.add_module(extension)
    parents = {extension.rpartition(".")[0] for extension in extensions}
    for importer in sorted(graph.modules - extensions):
        for parent in sorted(parents & graph.find_modules_directly_imported_by(importer)):
            statements = _from_imports(importer, folder)
            needs_parent = False
            for detail in graph.get_import_details(importer=importer, imported=parent):
                line = detail["line_number"]
                names = [name for source, name in statements.get(line, []) if source == parent]
                named = [f"{parent}.{name}" for name in names if f"{parent}.{name}" in extensions]
                # A name of the package's own (not a submodule, which grimp resolved already).
                needs_parent |= not names or any(
                    f"{parent}.{name}" not in graph.modules for name in names
                )
                for extension in named:
                    graph.add_import(
                        importer=importer,
                        imported=extension,
                        line_number=line,
                        line_contents=detail["line_contents"],
                    )
            if not needs_parent:
                graph.remove_import(importer=importer, imported=parent)
    return graph


def import_cycles(graph: grimp.ImportGraph) -> list[Cycle]:
    """Every shortest cycle through a direct import, as a module chain that starts and ends at
    its alphabetically first module; each cycle once."""
    cycles: set[Cycle] = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is None:
                continue
            ring = (importer, *back[:-1])
            first = ring.index(min(ring))
            cycles.add((*ring[first:], *ring[:first], ring[first]))
    return sorted(cycles)


def describe(graph: grimp.ImportGraph, cycle: Cycle) -> str:
    """``a -> b -> a``, then each import of the chain with its line."""
    lines = [" -> ".join(cycle)]
    for importer, imported in itertools.pairwise(cycle):
        for detail in graph.get_import_details(importer=importer, imported=imported):
            lines.append(f"  {importer} line {detail['line_number']}: {detail['line_contents']}")
    return "\n".join(lines)


def test_tensoracle_has_no_import_cycle():
    graph = import_graph("tensoracle")
    cycles = import_cycles(graph)
    assert not cycles, "import cycles in tensoracle:\n" + "\n".join(
        describe(graph, cycle) for cycle in cycles
    )


def test_the_graph_holds_the_extension_and_function_level_imports():
    """What the cycle test sees: tensoracle._core as a module of its own, and an import made
    inside a method (OutputComparison.plot draws through the plot module)."""
    graph = import_graph("tensoracle")
    assert "tensoracle._core" in graph.modules
    assert graph.direct_import_exists(importer="tensoracle.gpu", imported="tensoracle._core")
    assert not graph.direct_import_exists(importer="tensoracle.gpu", imported="tensoracle")
    # from tensoracle import _core, gpu: the extension and the module, not the package
    assert not graph.direct_import_exists(
        importer="tensoracle.cache.protocol", imported="tensoracle"
    )
    assert graph.direct_import_exists(
        importer="tensoracle.compare.measure", imported="tensoracle.compare.plot"
    )
    assert not graph.chain_exists(
        importer="tensoracle.compare.plot", imported="tensoracle.compare.measure"
    )
    assert not graph.chain_exists(
        importer="tensoracle.engine.declaration", imported="tensoracle.cache.identity"
    )


def _write_package(root: Path, name: str, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_a_cycle_through_function_and_type_checking_imports_is_found_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    _write_package(
        tmp_path,
        "ringpkg",
        {
            "__init__.py": "",
            "a.py": "from ringpkg import b\n",
            "b.py": "def later():\n    from ringpkg.inner import c\n",
            "inner/__init__.py": "",
            "inner/c.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from ..a import something\n"
            ),
            "leaf.py": "from ringpkg import a\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = import_graph("ringpkg")
    cycles = import_cycles(graph)
    assert cycles == [("ringpkg.a", "ringpkg.b", "ringpkg.inner.c", "ringpkg.a")]
    text = describe(graph, cycles[0])
    assert text.splitlines() == [
        "ringpkg.a -> ringpkg.b -> ringpkg.inner.c -> ringpkg.a",
        "  ringpkg.a line 1: from ringpkg import b",
        "  ringpkg.b line 2: from ringpkg.inner import c",
        "  ringpkg.inner.c line 3: from ..a import something",
    ]


def test_an_extension_import_is_an_edge_to_the_extension_unless_it_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``from pkg import _ext`` reaches the extension, not ``pkg/__init__``; a statement that
    also takes a name defined in ``__init__`` reaches both, and closes a cycle with it."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    _write_package(
        tmp_path,
        "extpkg",
        {
            "__init__.py": "from extpkg.user import run\nfrom extpkg.mixed import go\nLIMIT = 3\n",
            "user.py": "from extpkg import _ext, leaf\n\ndef run():\n    return _ext, leaf\n",
            "leaf.py": "",
            "mixed.py": "from extpkg import (\n    _ext,\n    LIMIT,\n)\n\ndef go():\n    pass\n",
            f"_ext{suffix}": "",  # never loaded: the graph is read from the sources
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = import_graph("extpkg")
    assert graph.direct_import_exists(importer="extpkg.user", imported="extpkg._ext")
    assert graph.direct_import_exists(importer="extpkg.user", imported="extpkg.leaf")
    assert not graph.direct_import_exists(importer="extpkg.user", imported="extpkg")
    assert graph.direct_import_exists(importer="extpkg.mixed", imported="extpkg._ext")
    assert import_cycles(graph) == [("extpkg", "extpkg.mixed", "extpkg")]
