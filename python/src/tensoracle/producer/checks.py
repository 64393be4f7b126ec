"""The rules a kernel declaration follows before it is compiled into a bundle.

They mirror what the bundle inspector accepts, so a bundle that the producer writes is never
refused later: names usable as file names and lookup keys, the argument types the launcher
understands, and divisors it can check at launch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tensoracle import _core
from tensoracle.bundle import SMS_1X

NAME_PATTERN = re.compile(r"[a-zA-Z0-9_.-]+")
SUPPORTED_TYPES = ("*fp16", "*fp32", "*i8", "*i32", "i32", "fp32")
MAX_PUBLIC_ARGUMENTS = 14
MAX_DIVISOR = 1 << 30

# The targets of a 1.x bundle, and every SM a bundle of ours may hold (the ones the core's
# inspector accepts): those three plus A100 (80), H100/H200 (90) and B200 (100) class devices.
# Triton builds the arch-specific sm_90a, sm_100a and sm_120a code for 90 and up; the bundle names
# them sm90, sm100 and sm120 all the same.
DEFAULT_TARGETS: tuple[int, ...] = tuple(int(name.removeprefix("sm")) for name in SMS_1X)
SUPPORTED_TARGETS: tuple[int, ...] = tuple(_core.inspected_sms())


def embedded_symbol(sm: int, name: str) -> str:
    """The exported C symbol that holds a cubin's bytes in the plugin library."""
    return "tensoracle_cubin_" + re.sub(r"[^a-zA-Z0-9_]", "_", f"sm{sm}_{name}")


def check_names(names: list[str]) -> None:
    """Refuses an empty kernel list, repeated names and names whose C symbols would collide."""
    if not names:
        raise ValueError("kernel names: specs is empty; a bundle needs at least one kernel")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"kernel names must be unique; repeated: {repeated}")
    symbols: dict[str, str] = {}
    for name in names:
        if not isinstance(name, str):
            continue  # the name pattern check reports it
        other = symbols.setdefault(embedded_symbol(0, name), name)
        if other != name:
            raise ValueError(
                f"kernel names {other!r} and {name!r} map to the same C symbol in bundle.cpp "
                "(characters other than letters, digits and '_' become '_'); rename one"
            )


def _is_divisor(value: Any) -> bool:
    return type(value) is int and 1 <= value <= MAX_DIVISOR and value & (value - 1) == 0


def check_spec(spec: Any) -> list[str]:
    """Checks one KernelSpec against its Triton function; returns its public argument names.

    Raises:
        ValueError: The name, signature, constexprs or divisors break a rule; the message
            names the kernel and the offending item.
    """
    name = spec.name
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"kernel name {name!r} must match [a-zA-Z0-9_.-]+ (letters, digits, '_', '.', '-')"
        )
    arg_names = getattr(spec.function, "arg_names", None)
    if not isinstance(arg_names, list) or not isinstance(getattr(spec.function, "src", None), str):
        raise ValueError(f"kernel {name!r}: function is not a @triton.jit function")
    constexprs = dict(spec.constexprs)
    unknown = [key for key in constexprs if key not in arg_names]
    if unknown:
        raise ValueError(
            f"kernel {name!r}: constexprs {unknown} are not parameters of the function {arg_names}"
        )
    pairs = _signature_pairs(name, spec.signature)
    public = [arg for arg in arg_names if arg not in constexprs]
    declared = [arg for arg, _ in pairs]
    if declared != public:
        raise ValueError(
            f"kernel {name!r}: signature names {declared} differ from the function's arguments "
            f"other than constexprs, in order: {public}"
        )
    if not 1 <= len(pairs) <= MAX_PUBLIC_ARGUMENTS:
        raise ValueError(
            f"kernel {name!r}: {len(pairs)} public arguments; a bundle kernel takes 1 to "
            f"{MAX_PUBLIC_ARGUMENTS}"
        )
    types = dict(pairs)
    for arg, triton_type in pairs:
        if triton_type not in SUPPORTED_TYPES:
            raise ValueError(
                f"kernel {name!r}: argument {arg!r} has type {triton_type!r}; supported types "
                f"are {', '.join(SUPPORTED_TYPES)}"
            )
    for arg, divisor in dict(spec.divisible_by).items():
        if arg not in types:
            raise ValueError(
                f"kernel {name!r}: divisible_by names {arg!r}, which is not a signature argument"
            )
        if not _is_divisor(divisor):
            raise ValueError(
                f"kernel {name!r}: divisible_by[{arg!r}] = {divisor!r}; a divisor is an int "
                "power of two from 1 to 2**30"
            )
        if types[arg] == "fp32" and divisor != 1:
            raise ValueError(
                f"kernel {name!r}: divisible_by[{arg!r}] = {divisor}; a float argument can only "
                "have divisor 1"
            )
    return public


def _signature_pairs(name: str, signature: Iterable[Any]) -> list[tuple[str, str]]:
    if isinstance(signature, (str, bytes)) or not isinstance(signature, (tuple, list)):
        raise ValueError(
            f"kernel {name!r}: signature must be a tuple of (name, triton type) pairs, got "
            f"{type(signature).__name__}"
        )
    pairs = []
    for item in signature:
        if not (
            isinstance(item, (tuple, list))
            and len(item) == 2
            and all(isinstance(part, str) for part in item)
        ):
            raise ValueError(
                f"kernel {name!r}: signature item {item!r} is not a (name, triton type) pair"
            )
        pairs.append((item[0], item[1]))
    return pairs
