"""`make demo` installs only python/requirements-runtime.txt (and the build tools): the demo, in
both of its processes, must import nothing from a distribution outside that set and what those
distributions require. Every module the demo's processes hold at exit is traced back to the
distribution that installed it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo.py"
RUNTIME = REPO / "python" / "requirements-runtime.txt"

# Run in every Python process the demo starts: at exit, write the names of the loaded modules.
RECORDER = """
import atexit, json, os, sys
def _record():
    path = os.path.join(os.environ["MODULE_RECORD_DIR"], f"{os.getpid()}.json")
    with open(path, "w") as file:
        json.dump(sorted(sys.modules), file)
atexit.register(_record)
"""


def _names(requirements_file: Path) -> set[str]:
    names = set()
    for line in requirements_file.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(_normal(Requirement(line).name))
    return names


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(roots: set[str]) -> set[str]:
    """The distributions `roots` need when installed without extras."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(_normal(requirement.name))
    return seen


def _loaded_modules(tmp_path: Path, arguments: list[str]) -> set[str]:
    """The modules every Python process of `python ARGUMENTS` holds at its exit."""
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(RECORDER)
    records = tmp_path / f"records-{len(list(tmp_path.glob('records-*')))}"
    records.mkdir()
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(hook),
        "MODULE_RECORD_DIR": str(records),
    }
    result = subprocess.run(
        [sys.executable, *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    files = list(records.glob("*.json"))
    assert files, f"no process of {arguments} recorded its modules"
    return {name for file in files for name in json.loads(file.read_text())}


def test_the_demo_imports_only_what_make_demo_installs(tmp_path: Path):
    allowed = _closure(_names(RUNTIME)) | {"tensoracle"}
    owners = metadata.packages_distributions()
    outside: dict[str, set[str]] = {}
    # What the interpreter itself loads at start-up (the environment's own .pth hooks, such as
    # setuptools' distutils shim in a new virtual environment) is there without the demo.
    startup = _loaded_modules(tmp_path, ["-c", "pass"])
    demo = _loaded_modules(tmp_path, [str(DEMO), "--cache-home", str(tmp_path / "cache")])
    assert len(list(tmp_path.glob("records-1/*.json"))) >= 2, "expected the demo's two processes"
    for module in demo - startup:
        top = module.split(".", 1)[0]
        for distribution in owners.get(top, []):
            name = _normal(distribution)
            if name not in allowed:
                outside.setdefault(name, set()).add(top)
    assert not outside, (
        "the demo imports modules of distributions that make demo does not install "
        f"(python/requirements-runtime.txt): {outside}"
    )


def test_the_check_sees_a_module_outside_the_runtime_set():
    # The check above would pass vacuously if the mapping from modules to distributions were
    # empty: pytest's own module must map to a distribution outside the runtime set.
    owners = metadata.packages_distributions()
    assert "pytest" in {_normal(name) for name in owners["_pytest"]}
    assert "pytest" not in _closure(_names(RUNTIME))
    assert {"numpy", "safetensors", "rich", "tensorrt-rtx-cu13"} <= _closure(_names(RUNTIME))
