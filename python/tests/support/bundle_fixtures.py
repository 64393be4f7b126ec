"""Test helpers that make tensoracle 1.x bundles without Triton or the producer: cubins that ptxas
(from the nvidia-cuda-nvcc wheel) assembles from small PTX kernels following the launch ABI
(public arguments, then two .u64 scratch pointers), manifests of schema version 1, and plugin
libraries that the system C++ compiler builds exporting the digest and the cubins."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

_PTX_TYPES = {"*fp16": "u64", "*fp32": "u64", "*i8": "u64", "*i32": "u64", "i32": "u32"}
_PTX_TYPES["fp32"] = "f32"
SIGNATURE = (("x", "*fp32"), ("n", "i32"), ("alpha", "fp32"))


def ptxas() -> Path:
    """ptxas of the nvidia-cuda-nvcc wheel (a test dependency: absent means a broken setup)."""
    path = Path(str(importlib.metadata.distribution("nvidia-cuda-nvcc").locate_file("")))
    tool = path / "nvidia" / "cu13" / "bin" / "ptxas"
    assert tool.is_file(), f"ptxas is missing at {tool}"
    return tool


def _ptx(name: str, sm: int, signature: tuple[tuple[str, str], ...]) -> str:
    params = [f".param .{_PTX_TYPES[t]} {n}" for n, t in signature]
    params += [".param .u64 global_scratch", ".param .u64 profile_scratch"]
    return (
        f".version 8.7\n.target sm_{sm}\n.address_size 64\n"
        f".visible .entry {name}({', '.join(params)})\n.reqntid 128, 1, 1\n{{\n  ret;\n}}\n"
    )


@functools.cache
def _scratch() -> Path:
    return Path(tempfile.mkdtemp(prefix="tensoracle-bundle-fixtures-"))


@functools.cache
def cubin(name: str, sm: int, signature: tuple[tuple[str, str], ...] = SIGNATURE) -> bytes:
    """A cubin of kernel ``name`` for ``sm`` (assembled once per session)."""
    work = Path(tempfile.mkdtemp(dir=_scratch()))
    (work / "k.ptx").write_text(_ptx(name, sm, signature))
    subprocess.run(
        [str(ptxas()), f"--gpu-name=sm_{sm}", str(work / "k.ptx"), "-o", str(work / "k.cubin")],
        check=True,
    )
    return (work / "k.cubin").read_bytes()


def embedded_symbol(sm: int, name: str) -> str:
    return "tensoracle_cubin_" + re.sub(r"[^a-zA-Z0-9_]", "_", f"sm{sm}_{name}")


def entry(name: str, sm: int, data: bytes, signature=SIGNATURE) -> dict[str, Any]:
    """The manifest entry the 1.x producer writes for ``data``."""
    return {
        "id": f"sm{sm}.{name}",
        "file": f"cubins/sm{sm}/{name}.cubin",
        "target_sm": f"sm{sm}",
        "entry_symbol": name,
        "embedded_symbol": embedded_symbol(sm, name),
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "signature": [{"name": n, "type": t} for n, t in signature],
        "hidden_trailing_parameters": [
            {"name": "global_scratch", "parameter_bytes": 8},
            {"name": "profile_scratch", "parameter_bytes": 8},
        ],
        "resources": {
            "compiled_shared_memory_bytes": 0,
            "launch_dynamic_shared_memory_bytes": 0,
            "registers_per_thread": 2,
            "global_scratch_bytes": 0,
            "profile_scratch_bytes": 0,
        },
        "specialization": {"divisible_by": {"x": 16}},
        "source_sha256": hashlib.sha256(name.encode()).hexdigest(),
    }


def digest(manifest: dict[str, Any]) -> str:
    """The 1.x digest computed independently of the core."""
    body = {k: v for k, v in manifest.items() if k != "bundle_sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def write_manifest(root: Path, manifest: dict[str, Any], *, sign: bool = True) -> dict[str, Any]:
    """Writes bundle.json as the producer does; with ``sign`` the digest is (re)recorded."""
    if sign:
        manifest.pop("bundle_sha256", None)
        manifest["bundle_sha256"] = digest(manifest)
    (root / "bundle.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    return manifest


def make_bundle(
    root: Path, kernels: tuple[str, ...] = ("scale", "dot"), sms: tuple[int, ...] = (86, 89, 120)
) -> dict[str, Any]:
    """A bundle directory as the 1.x producer lays it out; returns its manifest."""
    entries = []
    for sm in sms:
        for name in kernels:
            data = cubin(name, sm)
            path = root / "cubins" / f"sm{sm}" / f"{name}.cubin"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            entries.append(entry(name, sm, data))
    manifest = {
        "schema_version": 1,
        "producer": {"triton": "3.8.0", "ptxas": "13.2.86"},
        "entries": entries,
    }
    return write_manifest(root, manifest)


def plugin_source(identity: str, cubins: dict[str, bytes]) -> str:
    """C++ exporting ``identity`` as tensoracle_bundle_sha256 and each cubin as its symbol."""
    lines = [
        '#define EXPORT __attribute__((visibility("default")))',
        f'extern "C" EXPORT char const tensoracle_bundle_sha256[] = "{identity}";',
    ]
    for symbol, data in cubins.items():
        body = ",".join(str(b) for b in data)
        lines.append(f'extern "C" EXPORT alignas(16) unsigned char const {symbol}[] = {{{body}}};')
        lines.append(
            f'extern "C" EXPORT unsigned long long const {symbol}_size = sizeof({symbol});'
        )
    lines.append('extern "C" EXPORT int getCreators() { return 0; }')
    return "\n".join(lines) + "\n"


def build_plugin(
    output: Path, manifest: dict[str, Any], root: Path, *, identity: str | None = None
) -> Path:
    """Compiles a plugin library embedding every entry's cubin (as read from ``root``)."""
    compiler = shutil.which("g++") or shutil.which("c++")
    assert compiler is not None, "no C++ compiler on PATH"
    cubins = {
        e["embedded_symbol"]: (root / e["file"]).read_bytes()
        for e in manifest["entries"]
        if "embedded_symbol" in e
    }
    source = output.with_suffix(".cpp")
    source.write_text(plugin_source(identity or manifest["bundle_sha256"], cubins))
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O0", str(source), "-o", str(output)], check=True
    )
    return output
