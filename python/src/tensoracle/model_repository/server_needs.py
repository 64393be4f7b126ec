"""What a Triton server needs to load the models ``deploy triton`` wrote, beyond the
repository: the TensorRT version of the plans and the plugin libraries they were built with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tensoracle.model_repository.layout import DEFAULT

if TYPE_CHECKING:
    from tensoracle.model_repository.repository import Written


def needs(written: Sequence[Written]) -> list[str]:
    """One line for each thing the server needs."""
    lines = []
    versions = sorted({one.backend_version for one in written})
    if versions:
        lines.append(
            f"the plans are TensorRT {' and '.join(versions)} plans: serve them with a Triton "
            "release whose TensorRT is that version"
        )
    if any(DEFAULT in served.capabilities for one in written for served in one.served):
        lines.append(
            "an ampere_plus plan is default_model_filename: Triton loads it on every GPU that no "
            "cc_model_filenames key names, and it runs on compute capability 8.0 or newer only "
            "(a server with an older GPU fails to load the model)"
        )
    plugins = sorted({digest for one in written for digest in one.plugins})
    if plugins:
        lines.append(
            "the plans use plugin libraries (SHA-256 "
            + ", ".join(plugins)
            + "): start tritonserver with "
            '--backend-config=tensorrt,plugins="/path/a.so;/path/b.so" or with LD_PRELOAD '
            "naming them"
        )
    return lines
