"""IO tables described from real TensorRT-RTX networks and saved headers, for GPU-free tests.

Nothing here imitates TensorRT: the networks are the GPU tests' own (gpu_engines.py), built into
a real INetworkDefinition by the installed backend, and the header signatures are the ones
open_engine records. What a deserialized engine would report is compared with these tables by
test_execution_gpu.py on a GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_engines import Populate, backend_module, logger

from tensoracle.engine.io import _format_name
from tensoracle.execution.io_table import IOTensor, Profile, Shape


def _shape(dims: Any) -> Shape:
    return tuple(int(d) for d in dims)


def tensors_from_network(
    populate: Populate, profile: Mapping[str, Profile] | None = None
) -> list[IOTensor]:
    """Each input and output of ``populate``'s network, with ``profile`` for ranged inputs.

    The format is the one the saved header records for the tensor's ``allowed_formats``; an
    output of a KVCacheUpdate layer aliases the layer's cache input (TensorRT writes it in place).
    """
    trt = backend_module()
    builder = trt.Builder(logger(trt))
    network = builder.create_network(0)
    populate(trt, network)
    profile = profile or {}
    aliases = {}
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        if layer.type == trt.LayerType.KV_CACHE_UPDATE:
            aliases[layer.get_output(0).name] = layer.get_input(0).name
    tensors = []
    for mode, count, get in (
        ("INPUT", network.num_inputs, network.get_input),
        ("OUTPUT", network.num_outputs, network.get_output),
    ):
        for index in range(count):
            tensor = get(index)
            shape = _shape(tensor.shape)
            ranges = profile.get(tensor.name) if mode == "INPUT" and -1 in shape else None
            tensors.append(
                IOTensor(
                    name=tensor.name,
                    mode=mode,
                    shape=shape,
                    # TensorRT-RTX network tensors have no location: they are on the device.
                    location=getattr(getattr(tensor, "location", None), "name", "DEVICE"),
                    is_shape_io=bool(tensor.is_shape_tensor),
                    profile=ranges,
                    format=_format_name(trt, int(tensor.allowed_formats)),
                    aliased_input=aliases.get(tensor.name) if mode == "OUTPUT" else None,
                )
            )
    return tensors


def tensors_from_signature(signature: Mapping[str, Any]) -> list[IOTensor]:
    """The IO signature a saved header records (``references["io"]``), as IOTensors.

    The signature records no shape-tensor flag; the headers used here have no shape inputs.
    """
    tensors = []
    for entry in signature["tensors"]:
        ranges = entry.get("profile")
        tensors.append(
            IOTensor(
                name=entry["name"],
                mode=entry["mode"],
                shape=_shape(entry["shape"]),
                location=entry["location"],
                format=entry["format"],
                profile=None
                if ranges is None
                else (_shape(ranges["min"]), _shape(ranges["opt"]), _shape(ranges["max"])),
            )
        )
    return tensors
