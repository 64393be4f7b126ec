"""``tensoracle cache list --remote``: the published engines, in the local listing's formats.

The native ``cache list`` hands the command line here when ``--remote`` is given. Reads only
object metadata and, per entry, the first bytes (preamble and header) and the last 8 bytes
(whether a signature trailer follows): three requests per entry, no plan is downloaded.
"""

from __future__ import annotations

from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.objects import RemoteObjects, engine_key
from tensoracle.cli.output_format import (
    JSON,
    add_format_option,
    aligned_rows,
    chosen_format,
)
from tensoracle.cli.remote_cache import (
    EXIT_SUCCESS,
    add_remote_option,
    listed_engines,
    parser,
    print_report,
    remote_config,
    run,
    time_fields,
)
from tensoracle.errors import EngineCacheError
from tensoracle.terminal_text import terminal_text

USAGE = "tensoracle cache list --remote [URL] [--format json|table]"


def describe(objects: RemoteObjects, name: str, info: Any) -> dict[str, Any]:
    """One entry as the local listing writes it, plus ``signed``."""
    entry: dict[str, Any] = {
        "file_name": name,
        "size_bytes": info.size,
        "temporary": False,
        **time_fields(info.last_modified),
    }
    key = engine_key(name)
    url = objects.url(key)
    try:
        magic = _core.SIGNATURE_MAGIC_BYTES
        tail = bytes(objects.get_range(key, max(0, info.size - magic), info.size) or b"")
        signed = _core.has_signature_trailer(info.size, tail)
        engine_size = info.size - (_core.SIGNATURE_TRAILER_BYTES if signed else 0)
        preamble_size = _core.ENGINE_PREAMBLE_BYTES
        prefix = bytes(objects.get_range(key, 0, min(preamble_size, info.size)) or b"")
        prefix_size = _core.engine_prefix_bytes(prefix)
        if len(prefix) < prefix_size <= engine_size:
            prefix += bytes(objects.get_range(key, len(prefix), prefix_size) or b"")
        conditions, references, _offset = _core.decode_engine_header(prefix, engine_size, url)
    except EngineCacheError as error:
        entry.update(status="unrecognized", reason=str(error))
        return entry
    limit = (
        references.get("workspace_limit", "unknown") if isinstance(references, dict) else "unknown"
    )
    if not (limit is None or (isinstance(limit, int) and limit > 0)):
        limit = "unknown"
    entry.update(
        status="recognized",
        signed=signed,
        conditions=conditions,
        workspace_limit=limit,
        weight_paths=[],
    )
    return entry


def table(document: dict[str, Any]) -> str:
    rows = [("NAME", "GRAPH_VERSION", "SIZE", "RECORDED_AT", "STATUS", "SIGNED", "TARGETS")]
    for entry in document["entries"]:
        conditions = entry.get("conditions", {})
        targets = conditions.get("targets") or [str(conditions.get("gpu", {}).get("name", "-"))]
        rows.append(
            (
                # An unrecognized object's name is escaped already (str() would drop the mark).
                str(conditions["name"]) if "name" in conditions else entry["file_name"],
                str(conditions.get("graph_version", "-")),
                _core.format_size_human(entry["size_bytes"]),
                entry["recorded_at"],
                entry["status"],
                "yes" if entry.get("signed") else "no",
                ",".join(str(target) for target in targets),
            )
        )
    count = len(document["entries"])
    return aligned_rows(rows) + (
        f"{count} entr{'y' if count == 1 else 'ies'}, "
        f"{_core.format_size_human(document['total_size_bytes'])} in "
        f"{terminal_text(document['remote'])}\n"
    )


def _list(args: list[str], prog: str) -> int:
    made = parser(
        prog,
        "Print every engine published in the remote cache as one JSON object "
        "(or a table); reads headers only.",
    )
    add_remote_option(made, required_flag=True)
    add_format_option(made, JSON)
    options = made.parse_args(args)
    config = remote_config(options.remote)
    objects = RemoteObjects(config)
    listing = listed_engines(objects)
    entries = [describe(objects, name, info) for name, info in listing.entries]
    # Objects whose key obstore cannot name are listed as unrecognized, names escaped, so that
    # prune --remote can be pointed at them.
    entries = sorted(
        entries + listing.unrecognized(), key=lambda entry: entry["file_name"].encode()
    )
    document = {
        "remote": config.url,
        "entries": entries,
        "total_size_bytes": sum(entry["size_bytes"] for entry in entries),
    }
    print_report(document, chosen_format(options, prog), table)
    return EXIT_SUCCESS


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _list(args, prog))
