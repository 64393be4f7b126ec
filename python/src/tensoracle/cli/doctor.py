"""``tensoracle doctor``: what this machine has for building and running engines.

Reports the backends and their versions, the NVIDIA driver and CUDA driver API versions, each GPU
with its compute capability and whether each backend can run engines on it, the cache directory,
and the producer tools. Meant to be read by a person and pasted into a bug report: a readable
report by default, one JSON object with ``--format json``.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import importlib.metadata
import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tensoracle.cli.output_format import (
    JSON,
    TABLE,
    add_format_option,
    aligned_rows,
    chosen_format,
    one_line,
)
from tensoracle.engine.backends.tensorrt_rtx import KNOWN_TARGETS
from tensoracle.gpu import driver_library
from tensoracle.terminal_text import EscapedText, terminal_text

# Compute capabilities TensorRT-RTX 1.7 can target ("sm89" -> "8.9"); 9.0 (Hopper: H100, H200)
# is refused at run time with UNSUPPORTED_CC (observed on an H200 with TensorRT-RTX 1.7.1.116).
_RTX_TARGETS = {f"{target[2:-1]}.{target[-1]}" for target in KNOWN_TARGETS}
_RTX_REFUSED = {"9.0": "refused: TensorRT-RTX reports UNSUPPORTED_CC (observed on an H200)"}
_CU_DEVICE_ATTRIBUTE_CC_MAJOR = 75
_CU_DEVICE_ATTRIBUTE_CC_MINOR = 76


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _backends() -> list[dict[str, Any]]:
    from tensoracle.engine import backends

    selected: str | None
    try:
        selected = backends.backend().name
    except (ImportError, ValueError):
        selected = None
    found = []
    for name, adapter in backends._ADAPTERS.items():
        entry: dict[str, Any] = {"name": name, "module": adapter.MODULE_NAME}
        try:
            module = importlib.import_module(adapter.MODULE_NAME)
            entry.update(found=True, version=str(module.__version__))
        except ImportError as error:
            entry.update(found=False, error=str(error), install=f"pip install '{adapter.EXTRA}'")
        entry["selected"] = name == selected
        found.append(entry)
    return found


def _driver() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    driver: dict[str, Any] = {"nvidia_driver_version": None, "cuda_driver_api_version": None}
    proc = Path("/proc/driver/nvidia/version")
    if proc.is_file():
        words = proc.read_text(errors="replace").split()
        numbers = [word for word in words if word.count(".") >= 1 and word[0].isdigit()]
        driver["nvidia_driver_version"] = numbers[0] if numbers else None
    library = driver_library()
    try:
        cuda = ctypes.CDLL(library)
    except OSError as error:
        driver["problem"] = f"no CUDA driver: {library} cannot be loaded ({error})"
        return driver, []
    version = ctypes.c_int(0)
    if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0:
        driver["cuda_driver_api_version"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
    status = cuda.cuInit(0)
    if status != 0:
        driver["problem"] = f"cuInit failed with CUDA error {status}"
        return driver, []
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        driver["problem"] = "cuDeviceGetCount failed"
        return driver, []
    gpus = []
    for ordinal in range(count.value):
        device = ctypes.c_int(0)
        cuda.cuDeviceGet(ctypes.byref(device), ordinal)
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, device)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        cuda.cuDeviceGetAttribute(ctypes.byref(major), _CU_DEVICE_ATTRIBUTE_CC_MAJOR, device)
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), _CU_DEVICE_ATTRIBUTE_CC_MINOR, device)
        gpus.append(
            {
                "index": ordinal,
                "name": name.value.decode(errors="replace"),
                "compute_capability": f"{major.value}.{minor.value}",
            }
        )
    if not gpus:
        driver["problem"] = "the CUDA driver reports no GPU"
    return driver, gpus


def can_run(backend: str, compute_capability: str) -> dict[str, str]:
    """Whether ``backend`` can run engines on a GPU of this compute capability, and why."""
    major = int(compute_capability.split(".")[0])
    if backend == "tensorrt_rtx":
        if compute_capability in _RTX_REFUSED:
            return {"verdict": "no", "basis": _RTX_REFUSED[compute_capability]}
        if compute_capability in _RTX_TARGETS:
            return {"verdict": "expected", "basis": "a TensorRT-RTX build target; not run here"}
        return {"verdict": "unknown", "basis": "not a TensorRT-RTX 1.7 build target"}
    if major >= 8 or compute_capability == "7.5":
        return {"verdict": "expected", "basis": "TensorRT builds for the local GPU; not run here"}
    return {"verdict": "no", "basis": "older than compute capability 7.5"}


def _cache() -> dict[str, Any]:
    from tensoracle import _core

    try:
        directory = Path(_core.default_cache_directory())
    except ValueError as error:
        return {"directory": None, "problem": str(error)}
    entries = 0
    size = 0
    if directory.is_dir():
        for item in os.scandir(directory):
            if item.is_file(follow_symlinks=False):
                size += item.stat(follow_symlinks=False).st_size
                entries += item.name.endswith(".engine")
    return {
        "directory": str(directory),
        "exists": directory.is_dir(),
        "entries": entries,
        "size_bytes": size,
    }


def _producer_tools() -> list[dict[str, Any]]:
    from tensoracle.errors import ProducerToolError
    from tensoracle.producer import find_tool, tool_version

    tools: list[dict[str, Any]] = []
    for tool in ("ptxas", "cuobjdump"):
        try:
            path = find_tool(tool)
            tools.append(
                {"name": tool, "found": True, "path": str(path), "version": tool_version(path)}
            )
        except (ProducerToolError, OSError) as error:
            tools.append({"name": tool, "found": False, "problem": str(error)})
    for package in ("triton", "torch"):
        version = _version(package)
        tools.append({"name": package, "found": version is not None, "version": version})
    return tools


def platform_name() -> str:
    """The operating system and architecture as a saved engine's identity names them, such as
    ``linux-x86_64`` or ``windows-x86_64`` (where Python's own machine name is ``AMD64``)."""
    from tensoracle.cache import identity

    return f"{identity.operating_system()}-{identity.architecture()}"


def report() -> dict[str, Any]:
    """Everything ``tensoracle doctor`` prints, as one JSON-ready object."""
    backends = _backends()
    driver, gpus = _driver()
    for gpu in gpus:
        gpu["backends"] = {
            entry["name"]: can_run(entry["name"], gpu["compute_capability"]) for entry in backends
        }
    if gpus:
        gpu_summary = f"{len(gpus)} GPU(s)"
    else:
        gpu_summary = (
            f"no GPU: {driver.get('problem', 'none found')}. Engines can be built with "
            "TensorRT-RTX (ahead of time) but not run on this machine"
        )
    return {
        "tensoracle_version": _version("tensoracle"),
        "python": platform.python_version(),
        "platform": platform_name(),
        "backends": backends,
        "driver": driver,
        "gpus": gpus,
        "gpu_summary": gpu_summary,
        "cache": _cache(),
        "producer_tools": _producer_tools(),
    }


def _say(value: object) -> str:
    """A reported value as a person reads it: ``-`` for none, anything else made inert for a
    terminal (a GPU, path or error text is not ours to let a terminal act on)."""
    return "-" if value is None else terminal_text(str(value))


def table(data: dict[str, Any]) -> str:
    """The report as short aligned sections for people (``tensoracle doctor``'s default)."""
    lines = [
        f"tensoracle {_say(data['tensoracle_version'])}  python {_say(data['python'])}  "
        f"{_say(data['platform'])}",
        "",
        "Backends",
    ]
    backends = []
    for entry in data["backends"]:
        if entry["found"]:
            state = _say(entry.get("version"))
        else:
            state = f"not found ({_say(entry['install'])})"
        mark = "  (selected)" if entry["selected"] else ""
        backends.append((_say(entry["name"]), state + mark))
    lines += _section(backends, "  ")
    driver = data["driver"]
    lines += ["", "Driver"]
    lines += _section(
        [
            ("NVIDIA driver", _say(driver["nvidia_driver_version"])),
            ("CUDA driver API", _say(driver["cuda_driver_api_version"])),
        ],
        "  ",
    )
    lines += ["", "GPUs"]
    if not data["gpus"]:
        lines.append(f"  {_say(data['gpu_summary'])}")
    for gpu in data["gpus"]:
        lines.append(
            f"  {gpu['index']}: {_say(gpu['name'])}  compute capability "
            f"{_say(gpu['compute_capability'])}"
        )
        verdicts = [
            (_say(name), _say(verdict["verdict"]), _say(verdict["basis"]))
            for name, verdict in gpu["backends"].items()
        ]
        lines += _section(verdicts, "     ")
    cache = data["cache"]
    lines += ["", "Cache", f"  {_say(cache.get('directory'))}"]
    if cache.get("directory"):
        count = cache["entries"]
        state = f"{count} entr{'y' if count == 1 else 'ies'}, {cache['size_bytes']} bytes"
        lines.append(f"  {state}" if cache["exists"] else "  not created yet")
    else:
        lines.append(f"  {_say(cache.get('problem'))}")
    lines += ["", "Producer tools"]
    tools = []
    for tool in data["producer_tools"]:
        if tool["found"]:
            state = _say(tool.get("version") or tool.get("path"))
        elif tool.get("problem"):
            state = f"not found: {_say(one_line(tool['problem']))}"
        else:
            state = "not found"
        tools.append((_say(tool["name"]), state))
    lines += _section(tools, "  ")
    return "\n".join(lines) + "\n"


def _section(rows: Sequence[Sequence[str]], indent: str) -> list[str]:
    """The rows of a section as aligned lines (a rich table: ``aligned_rows``), each cell already
    made inert by ``_say`` (escaping it again would double its backslashes)."""
    inert = [tuple(EscapedText(cell) for cell in row) for row in rows]
    return aligned_rows(inert, indent).splitlines() if rows else []


def main(args: list[str], prog: str) -> int:
    """Prints the report; exit status 0, or 2 for invalid usage."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Report the backends, NVIDIA driver, GPUs (and whether each backend can run "
        "engines on them), the engine cache and the producer tools of this machine.",
    )
    add_format_option(parser, TABLE)
    try:
        options = parser.parse_args(args)
    except SystemExit as exit_request:
        return 0 if exit_request.code == 0 else 2
    data = report()
    if chosen_format(options, prog) == JSON:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(table(data))
    return 0
