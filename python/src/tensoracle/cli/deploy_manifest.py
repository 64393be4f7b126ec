"""The deployment manifest ``tensoracle build --manifest FILE`` writes: for every recipe, the entry
it prepared, described from the saved file itself, so that an application (C++ or Python) can
find, select and check a prebuilt engine without the model package's graph code.

Schema version 1 (docs/deploy.md): one JSON object, ``schema_version``, the recipe spec, the
remote cache (``null`` without ``--push``) and ``entries``, one per prepared recipe, each with the
recipe's name and graph_version, the entry's file name, its identity conditions as the header
records them (backend and version, targets or hardware compatibility level, inputs and their
profiles), the IO signature the header records, the plan's size and XXH3-128, the file's size,
and the fleet object (its key, URL and whether it was published signed) when pushed. The file is
replaced atomically: a reader sees the old manifest or the new one, never a part.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.objects import engine_key

SCHEMA_VERSION = 1


def saved_header(path: Path) -> bytes:
    """The first bytes of a saved engine file: its preamble and its header."""
    with path.open("rb") as file:
        prefix = file.read(_core.ENGINE_PREAMBLE_BYTES)
        return prefix + file.read(_core.engine_prefix_bytes(prefix) - len(prefix))


def entry(
    recipe: str, graph_version: str, path: Path, fleet_url: str | None, signed: bool | None
) -> dict[str, Any]:
    """One prepared entry as the manifest describes it, read from the saved file ``path``
    (``CorruptEngineError`` when its header cannot be read). ``fleet_url``: the object's URL
    when it was published (None otherwise), ``signed`` whether with a signature (None when it was
    published before this build, which did not read it back)."""
    header = saved_header(path)
    size = path.stat().st_size
    _core.decode_engine_header(header, size, str(path))  # checked within the readers' limits
    decoded = json.loads(header[_core.ENGINE_PREAMBLE_BYTES :])
    conditions, references, plan = (decoded[key] for key in ("conditions", "references", "plan"))
    return {
        "recipe": recipe,
        "graph_version": graph_version,
        "file_name": path.name,
        "conditions": conditions,
        "backend": conditions.get("backend"),
        "backend_version": conditions.get("backend_version"),
        "targets": conditions.get("targets"),
        "hardware_compatibility": conditions.get("hardware_compatibility"),
        "io": references.get("io") if isinstance(references, dict) else None,
        "plan": {"size": plan["size"], "xxh3_128": plan["xxh3_128"]},
        "engine_bytes": size,
        "fleet": None
        if fleet_url is None
        else {"key": engine_key(path.name), "url": fleet_url, "signed": signed},
    }


def write(path: Path, spec: str, remote: str | None, entries: list[dict[str, Any]]) -> None:
    """Writes the manifest to ``path`` atomically (a temporary file in its folder, flushed, then
    renamed over it); ``OSError`` naming the file when it cannot be written."""
    document = {
        "schema_version": SCHEMA_VERSION,
        "spec": spec,
        "remote": remote,
        "entries": entries,
    }
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    folder = path.parent if str(path.parent) else Path(".")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as error:
        raise OSError(f"cannot write the manifest {path}: {error}") from error
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep the application from reading it
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise OSError(f"cannot write the manifest {path}: {error}") from error
