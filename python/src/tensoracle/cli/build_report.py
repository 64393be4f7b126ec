"""What ``tensoracle build`` reports: one row per recipe, as a table (the layout of
``tensoracle cache list --format table``) or as one JSON document."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tensoracle.cli.output_format import aligned_rows
from tensoracle.terminal_text import terminal_text

BUILT, REUSED, FAILED = "built", "reused", "failed"
# Published: by this run ("yes"), found published already ("already"), or not ("no").
YES, NO, ALREADY = "yes", "no", "already"


@dataclass
class Row:
    """One recipe's result. ``error`` is set when it failed, or when publishing it failed
    (``published`` NO with ``--push``; ``publish_reason`` says why)."""

    name: str
    graph_version: str
    targets: list[str] | None  # None: the backend's default (the saved header says which)
    outcome: str = FAILED
    published: str = NO
    seconds: float = 0.0
    path: str | None = None
    error: str | None = None
    publish_reason: str | None = None


def document(
    spec: str, remote: str | None, signed: bool | None, rows: list[Row], shard: str | None = None
) -> dict[str, Any]:
    """The JSON document: what was asked, one object per recipe, and the counts (of publishing
    only with ``--push``: None without). ``succeeded``: no recipe failed and, with ``--push``,
    the remote cache holds every entry; a build of no recipe succeeds only as a part of a sharded
    build (``shard``, "I/N", None without ``--shard``), which may be given none."""
    pushing = remote is not None
    return {
        "spec": spec,
        "remote": remote,
        "signed": signed,
        "shard": shard,
        "recipes": [{**asdict(row), "seconds": round(row.seconds, 3)} for row in rows],
        "built": sum(row.outcome == BUILT for row in rows),
        "reused": sum(row.outcome == REUSED for row in rows),
        "failed": sum(row.outcome == FAILED for row in rows),
        "published": sum(row.published == YES for row in rows) if pushing else None,
        "already_published": sum(row.published == ALREADY for row in rows) if pushing else None,
        "not_published": sum(row.published == NO for row in rows) if pushing else None,
        "succeeded": (bool(rows) or shard is not None)
        and all(row.error is None and row.outcome != FAILED for row in rows)
        and (not pushing or all(row.published != NO for row in rows)),
    }


def _targets(row: Row) -> str:
    return ",".join(row.targets) if row.targets else "default"


def table(report: dict[str, Any], rows: list[Row]) -> str:
    """Aligned columns, a row per recipe, then a line of counts."""
    cells = [("NAME", "GRAPH_VERSION", "TARGETS", "OUTCOME", "PUBLISHED", "SECONDS", "ERROR")]
    for row in rows:
        error = " ".join((row.error or "").split())
        cells.append(
            (
                row.name,
                row.graph_version,
                _targets(row),
                row.outcome,
                row.published,
                f"{row.seconds:.1f}",
                error,
            )
        )
    lines = aligned_rows(cells).splitlines()
    count = len(rows)
    summary = (
        f"{count} recipe{'' if count == 1 else 's'}: {report['built']} built, "
        f"{report['reused']} reused, {report['failed']} failed"
    )
    if report["remote"] is None:
        summary += "; nothing published (no --push)"
    else:
        summary += f"; {report['published']} published, {report['already_published']} already "
        summary += "published"
        unpublished = report["not_published"]
        summary += f", {unpublished} not published" if unpublished else ""
        summary += f" in {terminal_text(report['remote'])}"
    lines.append(summary)
    return "\n".join(lines) + "\n"
