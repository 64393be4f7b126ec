"""The Python environment the tests run in, and what is installed there.

By default the check makes a virtual environment layered on the Python that runs it: the new
environment sees that Python's packages (the TensorRT backend, CuPy or cuda-python, pytest), and
tensoracle is installed into the new one only, so the user's environment is left as it was.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

from gpu_check.report import Software
from gpu_check.steps import FAIL, PASS, StepResult, command_step

# Distributions whose versions the report lists: these names, and names starting with a prefix.
REPORTED_NAMES = (
    "tensoracle",
    "numpy",
    "safetensors",
    "ml-dtypes",
    "torch",
    "triton",
    "cuda-python",
    "cuda-bindings",
    "nvidia-cuda-nvcc",
    "pytest",
    "pytest-timeout",
    "hypothesis",
    "xxhash",
)
REPORTED_PREFIXES = ("tensorrt", "cupy-")

_PROBE = r"""
import importlib.metadata as metadata, json, platform, sys
names = set(sys.argv[1].split(","))
prefixes = tuple(sys.argv[2].split(","))
packages = {}
for dist in metadata.distributions():
    name = (dist.metadata["Name"] or "").lower().replace("_", "-")
    if (name in names or name.startswith(prefixes)) and name not in packages:
        packages[name] = dist.version
try:
    import tensoracle
    chosen = tensoracle.backend()
    backend = f"{chosen.name} {chosen.version}"
except Exception as error:  # the report says why no backend could be used
    backend = f"none: {type(error).__name__}: {error}"
python = f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"
print(json.dumps({"packages": packages, "backend": backend, "python": python}))
"""


def parent_site_directories() -> list[str]:
    """The site-packages directories of the Python running the check."""
    directories = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    if site.ENABLE_USER_SITE:
        directories.append(site.getusersitepackages())
    unique: list[str] = []
    for directory in directories:
        if directory not in unique and Path(directory).is_dir():
            unique.append(directory)
    return unique


def create_layered_venv(folder: Path, *, log: Path, timeout: float) -> StepResult:
    """Makes `folder` a virtual environment that also sees this Python's packages."""
    step = command_step(
        "Python environment",
        [sys.executable, "-m", "venv", "--clear", "--without-pip", str(folder)],
        timeout=timeout,
        log=log,
    )
    if step.status != PASS:
        return step
    python = venv_python(folder)
    found = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        step.status, step.reason = (
            FAIL,
            f"the new environment's Python fails: {found.stderr}",
        )
        return step
    layer = Path(found.stdout.strip()) / "_gpu_check_parent.pth"
    layer.write_text("\n".join(parent_site_directories()) + "\n", encoding="utf-8")
    step.reason = f"{folder}, layered on {sys.executable}"
    return step


def venv_python(folder: Path) -> Path:
    """The interpreter of the virtual environment in `folder`."""
    return folder / "bin" / "python"


def wheel_names(wheelhouse: Path) -> list[str]:
    """The distribution names of the wheels in `wheelhouse`, each once."""
    names: list[str] = []
    for wheel in sorted(wheelhouse.glob("*.whl")):
        name = wheel.name.split("-", 1)[0].lower().replace("_", "-")
        if name not in names:
            names.append(name)
    return names


def install_command(
    python: Path, repository: Path, wheelhouse: Path | None
) -> list[str]:
    """pip's command line: every wheel of the wheelhouse with no index, else the checkout's package."""
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    if wheelhouse is not None:
        return [
            *pip,
            "--no-index",
            "--find-links",
            str(wheelhouse),
            *wheel_names(wheelhouse),
        ]
    return [
        *pip,
        "-c",
        str(repository / "python" / "requirements-dev.txt"),
        str(repository / "python"),
        "pytest",
        "hypothesis",
        "xxhash",
    ]


def software(python: Path, *, timeout: float = 120) -> Software:
    """The versions, the backend tensoracle picks, and the Python, asked of `python` itself."""
    try:
        probed = subprocess.run(
            [
                str(python),
                "-c",
                _PROBE,
                ",".join(REPORTED_NAMES),
                ",".join(REPORTED_PREFIXES),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Software(backend=f"not determined: {error}")
    if probed.returncode != 0:
        last = probed.stderr.strip().splitlines()[-1:] or ["no output"]
        return Software(backend=f"not determined: {last[0]}")
    data = json.loads(probed.stdout.strip().splitlines()[-1])
    return Software(
        python=data["python"], backend=data["backend"], packages=data["packages"]
    )
