"""Why ``open_engine`` built although entries of the same name are saved.

Before saving a new entry, the store is asked for the saved entry of the same ``name`` nearest to
the new conditions (fewest differing keys). Its differences become the rebuild reason: logged at
INFO (logger ``tensoracle.rebuild``) and recorded in the new entry's header as the reference
``rebuild_reason``::

    {"compared_with": "<file name>",
     "differences": [{"key": "graph_version", "before": "3", "after": "4",
                      "description": "graph_version 3 → 4"}, ...]}

A forced rebuild of an unchanged identity records an empty list of differences. An entry rebuilt
because the backend said the saved one cannot run on this device records that instead::

    {"compared_with": "<file name>", "differences": [], "cannot_run_here": "INVALID (...)"}
"""

from __future__ import annotations

import logging
import os
from typing import Any

from tensoracle import _core

_logger = logging.getLogger("tensoracle.rebuild")


def find(directory: str, conditions: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The ``rebuild_reason`` reference for a build of ``name`` with these conditions, or None
    (first of its name). Logs the reason."""
    reason: dict[str, Any] | None = _core.nearest_entry(directory, conditions)
    if reason is None:
        return None
    _logger.info("building %r again: %s", name, describe(reason))
    return reason


def cannot_run_here(path: str, problem: str) -> dict[str, Any]:
    """The ``rebuild_reason`` of an entry built again because the saved one at ``path`` cannot
    run on this device (``problem``, the backend's words)."""
    return {"compared_with": os.path.basename(path), "differences": [], "cannot_run_here": problem}


def describe(reason: Any) -> str | None:
    """The recorded reason as one line, e.g. ``graph_version 3 → 4; weights: m.safetensors
    content changed (compared with <file>)``; None for entries without one."""
    if not isinstance(reason, dict):
        return None
    differences = [
        str(item.get("description", item.get("key")))
        for item in reason.get("differences", [])
        if isinstance(item, dict)
    ]
    problem = reason.get("cannot_run_here")
    if isinstance(problem, str):
        differences.append(f"the saved engine cannot run on this device: {problem}")
    text = "; ".join(differences) or "rebuild forced, no condition differs"
    return f"{text} (compared with {reason.get('compared_with')})"
