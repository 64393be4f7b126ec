"""The ``config.pbtxt`` of a Triton model served by its ``tensorrt_plan`` platform, written as the
protobuf text format of Triton's ``ModelConfig`` message (model_config.proto): the name, the
platform, ``max_batch_size: 0`` (the plans' shapes are their own: the batch dimension, where there
is one, is the first of ``dims``), each input and output with its Triton ``data_type`` and its
``dims`` (-1 for a dynamic dimension), ``cc_model_filenames`` from each compute capability to the
plan Triton loads on a GPU of that capability, and ``default_model_filename`` for a plan that runs
on every GPU from Ampere on.

The text is written here, not by protobuf (a dependency the package does not have); the tests
parse every file written with ``google.protobuf.text_format`` into ``tritonclient``'s
``ModelConfig`` and compare the fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PLATFORM = "tensorrt_plan"

# TensorRT's data type names, as the IO signature records them, and Triton's for each. FP8, E8M0,
# INT4 and FP4 have none: an engine with such an input or output cannot be served.
DATA_TYPES: Mapping[str, str] = {
    "FLOAT": "TYPE_FP32",
    "HALF": "TYPE_FP16",
    "BF16": "TYPE_BF16",
    "INT8": "TYPE_INT8",
    "INT32": "TYPE_INT32",
    "INT64": "TYPE_INT64",
    "BOOL": "TYPE_BOOL",
    "UINT8": "TYPE_UINT8",
}


@dataclass(frozen=True)
class Tensor:
    """One input or output as ``config.pbtxt`` declares it."""

    name: str
    data_type: str  # Triton's name, such as "TYPE_FP32"
    dims: tuple[int, ...]  # -1 for a dynamic dimension


@dataclass(frozen=True)
class ModelConfig:
    name: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    cc_model_filenames: Mapping[str, str]  # "9.0" -> the plan's file name in the version folder
    default_model_filename: str | None = None

    def text(self) -> str:
        """The protobuf text format of the ModelConfig message."""
        lines = [
            f"name: {quoted(self.name)}",
            f"platform: {quoted(PLATFORM)}",
            "max_batch_size: 0",
        ]
        lines += _tensors("input", self.inputs)
        lines += _tensors("output", self.outputs)
        if self.default_model_filename is not None:
            lines.append(f"default_model_filename: {quoted(self.default_model_filename)}")
        for capability in sorted(self.cc_model_filenames, key=_capability_order):
            lines += [
                "cc_model_filenames {",
                f"  key: {quoted(capability)}",
                f"  value: {quoted(self.cc_model_filenames[capability])}",
                "}",
            ]
        return "\n".join(lines) + "\n"


def _tensors(field: str, tensors: Sequence[Tensor]) -> list[str]:
    lines = []
    for tensor in tensors:
        dims = ", ".join(str(dim) for dim in tensor.dims)
        lines += [
            f"{field} {{",
            f"  name: {quoted(tensor.name)}",
            f"  data_type: {tensor.data_type}",
            f"  dims: [ {dims} ]",
            "}",
        ]
    return lines


def _capability_order(capability: str) -> tuple[int, ...]:
    return tuple(int(part) for part in capability.split("."))


def quoted(text: str) -> str:
    """``text`` as a text-format string literal: its UTF-8 bytes, with the quote, the backslash
    and every byte outside printable ASCII escaped in octal (which any protobuf parser reads)."""
    out = ['"']
    for byte in text.encode("utf-8"):
        if byte in (0x22, 0x5C):
            out.append("\\" + chr(byte))
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    out.append('"')
    return "".join(out)
