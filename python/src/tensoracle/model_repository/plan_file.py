"""A plan file of the version folder: the raw TensorRT plan of a verified entry, read through
its verified reader and written to a temporary renamed once every byte of it was checked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tensoracle import _core

# How much of the plan one read asks for: the reader hands on at most the rest of one chunk
# (PLAN_CHUNK_BYTES), checked.
READ_BYTES = _core.PLAN_CHUNK_BYTES


def write_plan(engine: Any, path: Path) -> None:
    """The verified plan of ``engine`` (a streamed _core.DeployedEngine) into ``path``: each
    piece checked before it is written, into a temporary renamed once the whole plan was
    checked."""
    temporary = path.with_name(f".{path.name}.partial")
    with open(temporary, "xb") as file:
        offset = 0
        while piece := engine.read_plan(offset, READ_BYTES):
            file.write(piece)
            offset += len(piece)
        engine.check_rest()  # nothing is left unread; a reader that stopped short would say so
        if offset != engine.plan_size or not engine.checked_whole:
            raise OSError(f"{engine.path}: {offset} of {engine.plan_size} plan bytes were read")
        file.flush()
        os.fsync(file.fileno())
    os.rename(temporary, path)
