"""What cuobjdump says about a compiled cubin: its kernel parameter layout and its registers.

The launcher passes a kernel's public arguments followed by two 8-byte scratch pointers (the
hidden parameters Triton appends). A cubin is only accepted when the parameter table the
compiler wrote (``EIATTR_KPARAM_INFO`` in ``.nv.info.<kernel>``) is exactly that layout.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

# The parameters every Triton 3.x kernel takes after its public ones, with their sizes.
HIDDEN_TRAILING_PARAMETERS: tuple[tuple[str, int], ...] = (
    ("global_scratch", 8),
    ("profile_scratch", 8),
)

_PARAM = re.compile(
    r"Ordinal\s*:\s*0x([0-9a-fA-F]+)\s+Offset\s*:\s*0x([0-9a-fA-F]+)\s+"
    r"Size\s*:\s*0x([0-9a-fA-F]+)"
)


def _cuobjdump(cuobjdump: Path, option: str, cubin: Path) -> str:
    return subprocess.run(
        [str(cuobjdump), option, str(cubin)],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
        env={**os.environ, "LC_ALL": "C"},
    ).stdout


def parameter_bytes(triton_type: str) -> int:
    """The size of one public argument in the kernel's parameter buffer."""
    return 8 if triton_type.startswith("*") else 4


def expected_layout(public_types: Sequence[str]) -> list[tuple[int, int, int]]:
    """(ordinal, offset, size) of every parameter: the public arguments, then the two hidden
    pointers, each at the next offset aligned to its own size."""
    sizes = [parameter_bytes(t) for t in public_types]
    sizes += [size for _, size in HIDDEN_TRAILING_PARAMETERS]
    layout, offset = [], 0
    for ordinal, size in enumerate(sizes):
        offset = (offset + size - 1) // size * size
        layout.append((ordinal, offset, size))
        offset += size
    return layout


def parameter_layout(elf_dump: str, entry_symbol: str) -> list[tuple[int, int, int]]:
    """(ordinal, offset, size) of each parameter in ``.nv.info.<entry_symbol>``, by ordinal."""
    lines = elf_dump.splitlines()
    header = f".nv.info.{entry_symbol}"
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == header)
    except StopIteration:
        return []
    params: list[tuple[int, int, int]] = []
    for line in lines[start + 1 :]:
        if line.startswith("."):
            break
        found = _PARAM.search(line)
        if found:
            ordinal, offset, size = (int(part, 16) for part in found.groups())
            params.append((ordinal, offset, size))
    return sorted(params)


def check_parameter_layout(
    cuobjdump: Path, cubin: Path, entry_symbol: str, public_types: Sequence[str], where: str
) -> None:
    """Raises ValueError unless the cubin's parameters are the public ones plus two pointers."""
    found = parameter_layout(_cuobjdump(cuobjdump, "-elf", cubin), entry_symbol)
    expected = expected_layout(public_types)
    if found != expected:
        raise ValueError(
            f"{where}: the cubin's parameter layout (ordinal, offset, size) {found} is not the "
            f"expected {expected}: the public arguments (8 bytes for pointers, 4 otherwise) "
            "followed by the global and profile scratch pointers"
        )


def registers_per_thread(cuobjdump: Path, cubin: Path, entry_symbol: str, where: str) -> int:
    """The register count cuobjdump reports for the kernel (``REG:<n>``).

    Raises:
        ValueError: cuobjdump reports no such function or no register count for it.
    """
    output = _cuobjdump(cuobjdump, "--dump-resource-usage", cubin)
    parts = output.split(f"Function {entry_symbol}:", 1)
    found = (
        re.search(r"\bREG:(\d+)", parts[1].split("Function ", 1)[0]) if len(parts) == 2 else None
    )
    if found is None:
        raise ValueError(
            f"{where}: cuobjdump --dump-resource-usage reports no register count (REG:<n>) for "
            f"function {entry_symbol!r}"
        )
    return int(found.group(1))
