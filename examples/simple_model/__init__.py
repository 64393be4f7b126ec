"""A small model package in the shape the tensoracle docs use: the features/result graph, its
build declaration and expected IO, and the safetensors weights beside this file.

result = features + bias, where features has shape (1, n, 2) with n from 1 to 448 and bias (2
floats) comes from model.safetensors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import tensoracle
from safetensors.numpy import load_file
from tensoracle import BuilderSettings, EngineBuild, EngineIO, InputShape, TensorSpec

trt: Any = tensoracle.backend().module

WEIGHTS = Path(__file__).with_name("model.safetensors")
NAME = "simple_model"
GRAPH_VERSION = "1"


def graph(network: Any) -> None:
    """Adds ``features + bias`` to ``network``; the output is named ``result``."""
    weights = load_file(str(WEIGHTS))
    features = network.add_input("features", trt.float32, (1, -1, 2))
    bias = np.ascontiguousarray(weights["bias"][None, None, :], dtype=np.float32)
    constant = network.add_constant(bias.shape, bias).get_output(0)
    result = network.add_elementwise(features, constant, trt.ElementWiseOperation.SUM)
    output = result.get_output(0)
    output.name = "result"
    network.mark_output(output)


declaration = EngineBuild(
    inputs={"features": InputShape.ranged((1, 1, 2), (1, 64, 2), (1, 448, 2))},
    settings=BuilderSettings(workspace_limit=None, optimization_level=3),
)

io = EngineIO(
    inputs={"features": TensorSpec(trt.float32, (1, -1, 2))},
    outputs={"result": TensorSpec(trt.float32, (1, -1, 2))},
)


def reference(features: np.ndarray) -> np.ndarray:
    """What the engine computes, in NumPy."""
    return features + load_file(str(WEIGHTS))["bias"][None, None, :]
