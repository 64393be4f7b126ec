"""The machine under test: GPUs as the CUDA driver reports them, the driver, the OS and Python."""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# CUdevice_attribute values from cuda.h.
_CC_MAJOR = 75
_CC_MINOR = 76
_MULTIPROCESSORS = 16


@dataclass
class Gpu:
    """One CUDA device."""

    index: int
    name: str
    compute_capability: str
    memory_mib: int
    multiprocessors: int


@dataclass
class Machine:
    """What the report's first table shows. `gpu_absent` says why no GPU can be used, if so."""

    gpus: list[Gpu] = field(default_factory=list)
    gpu_absent: str | None = None
    driver_version: str = "unknown"
    cuda_driver_api: str = "unknown"
    os_name: str = ""
    kernel: str = ""
    glibc: str = ""
    cpu: str = ""
    python: str = ""


def _cuda_version_text(value: int) -> str:
    return f"{value // 1000}.{(value % 1000) // 10}"


def _query_cuda(machine: Machine, library: str) -> None:
    try:
        cuda = ctypes.CDLL(library)
    except OSError as error:
        machine.gpu_absent = f"no CUDA driver library ({library}: {error})"
        return
    version = ctypes.c_int(0)
    if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0 and version.value:
        machine.cuda_driver_api = _cuda_version_text(version.value)
    status = cuda.cuInit(0)
    if status != 0:
        machine.gpu_absent = (
            f"the CUDA driver is installed but cuInit failed (CUresult {status})"
        )
        return
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        machine.gpu_absent = "the CUDA driver reports no device"
        return
    for index in range(count.value):
        device = ctypes.c_int(0)
        if cuda.cuDeviceGet(ctypes.byref(device), index) != 0:
            continue
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, len(name), device)
        values = {}
        for attribute in (_CC_MAJOR, _CC_MINOR, _MULTIPROCESSORS):
            value = ctypes.c_int(0)
            cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, device)
            values[attribute] = value.value
        memory = ctypes.c_size_t(0)
        cuda.cuDeviceTotalMem_v2(ctypes.byref(memory), device)
        machine.gpus.append(
            Gpu(
                index=index,
                name=name.value.decode(errors="replace"),
                compute_capability=f"{values[_CC_MAJOR]}.{values[_CC_MINOR]}",
                memory_mib=memory.value // (1 << 20),
                multiprocessors=values[_MULTIPROCESSORS],
            )
        )


def _driver_version() -> str:
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        try:
            listed = subprocess.run(
                [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            lines = listed.stdout.split()
            if listed.returncode == 0 and lines:
                return lines[0]
        except (OSError, subprocess.TimeoutExpired):
            pass
    version_file = Path("/proc/driver/nvidia/version")
    if version_file.is_file():
        words = version_file.read_text(errors="replace").split()
        for index, word in enumerate(words):
            if word == "Module" and index + 1 < len(words):
                return words[index + 1]
    return "unknown"


def _os_name() -> str:
    release = Path("/etc/os-release")
    if release.is_file():
        for line in release.read_text(errors="replace").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    return platform.system()


def describe(cuda_library: str = "libcuda.so.1") -> Machine:
    """Describes this machine; never raises for a missing GPU or driver (see `gpu_absent`)."""
    machine = Machine()
    _query_cuda(machine, cuda_library)
    if machine.gpus or machine.gpu_absent is None or "cuInit" in machine.gpu_absent:
        machine.driver_version = _driver_version()
    machine.os_name = _os_name()
    machine.kernel = platform.release()
    libc, libc_version = platform.libc_ver()
    machine.glibc = f"{libc} {libc_version}".strip()
    machine.cpu = f"{platform.machine()}, {os.cpu_count() or 0} logical CPUs"
    machine.python = f"{platform.python_implementation()} {platform.python_version()}"
    machine.python += f" ({sys.executable})"
    return machine
