"""Refusal, before building, of graphs whose tensor types the build targets cannot run.

Each backend adapter lists what its builder refuses per target (``UNSUPPORTED_TYPES`` and
``UNSUPPORTED_FLOAT_MATRIX_MULTIPLY``), as observed in real builds. A graph that hits one of them
raises ValueError naming the tensor, its type, the targets and the setting to change, instead of
the backend's compiler error after part of the build has run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tensoracle.engine.backends import Backend


def _tensors(network: Any) -> Iterator[Any]:
    """Every graph input and every layer output, in graph order."""
    for index in range(network.num_inputs):
        yield network.get_input(index)
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        for output in range(layer.num_outputs):
            yield layer.get_output(output)


def _remedy(chosen: Backend, refused: tuple[str, ...], graph_change: str) -> str:
    known = getattr(chosen.adapter, "KNOWN_TARGETS", ())
    able = [target for target in known if target not in refused]
    suggestion = f"BuilderSettings(targets={tuple(able)!r})" if able else "other targets"
    return (
        f"declare targets that can run it in BuilderSettings.targets, for example {suggestion}, "
        f"or {graph_change}"
    )


def check_target_support(
    chosen: Backend, network: Any, targets: list[str], declared: tuple[str, ...] | None
) -> None:
    """Raises ValueError when a tensor type (or an fp32 matrix multiplication) of ``network``
    cannot be built by ``chosen`` for one of ``targets`` (``declared`` is
    ``BuilderSettings.targets``, None when the backend's default was used)."""
    origin = "from BuilderSettings.targets" if declared is not None else "the backend's default"
    planned = f"(the targets are {', '.join(targets)}, {origin})"
    types: dict[str, tuple[str, ...]] = chosen.adapter.UNSUPPORTED_TYPES
    for tensor in _tensors(network):
        type_name = tensor.dtype.name
        refused = types.get(type_name, ())
        blocked = [target for target in targets if target in refused]
        if blocked:
            raise ValueError(
                f"tensor {tensor.name!r} has type {type_name}, which {chosen.name} "
                f"{chosen.version} cannot build for target(s) {', '.join(blocked)} {planned}; "
                + _remedy(chosen, refused, "change the tensor's type in the graph")
            )
    gemm_refused: tuple[str, ...] = chosen.adapter.UNSUPPORTED_FLOAT_MATRIX_MULTIPLY
    blocked = [target for target in targets if target in gemm_refused]
    if not blocked:
        return
    trt = chosen.module
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        if layer.type != trt.LayerType.MATRIX_MULTIPLY:
            continue
        for position in range(layer.num_inputs):
            tensor = layer.get_input(position)
            if tensor is not None and tensor.dtype == trt.DataType.FLOAT:
                raise ValueError(
                    f"tensor {tensor.name!r} has type FLOAT and feeds the matrix multiplication "
                    f"{layer.name!r}, which {chosen.name} {chosen.version} cannot build for "
                    f"target(s) {', '.join(blocked)}, which have no fp32 matrix multiplication "
                    f"{planned}; "
                    + _remedy(chosen, gemm_refused, "cast its operands to float16 in the graph")
                )
