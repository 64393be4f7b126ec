"""``tensoracle cache prune --remote``: removes published engines, with the local command's
criteria and its two JSON lines (plan, then result), or with ``--format table`` its two tables.

A remote object's recorded time is its publication time (S3's LastModified): object stores do
not record reads, and recording them would cost a write per open. ``--unused-for 30`` therefore
removes engines published more than 30 days ago; a node that still needs one builds and
publishes it again. Removal is a DELETE per object; other nodes keep their local copies.
"""

from __future__ import annotations

import time
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.objects import RemoteObjects, RemoteUnavailable
from tensoracle.cli.output_format import (
    JSON,
    TABLE,
    add_format_option,
    aligned_rows,
    chosen_format,
    one_line,
)
from tensoracle.cli.remote_cache import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    UsageError,
    add_remote_option,
    listed_engines,
    parser,
    print_json,
    remote_config,
    run,
    time_fields,
)

USAGE = (
    "tensoracle cache prune --remote [URL] (--unused-for DAYS | --max-size SIZE) [--dry-run] "
    "[--format json|table]"
)
NOTICE = (
    "removed engines are published again by the next node that builds them; nodes keep their "
    "local copies"
)


def _criterion(options: Any) -> dict[str, Any]:
    if (options.unused_for is None) == (options.max_size is None):
        raise UsageError(
            "give only one of --unused-for and --max-size, not both"
            if options.unused_for is not None
            else "give exactly one of --unused-for DAYS and --max-size SIZE"
        )
    if options.unused_for is not None:
        try:
            age = _core.parse_days_nanoseconds(options.unused_for, "--unused-for")
        except ValueError as error:
            raise UsageError(str(error)) from error
        cutoff = time.time_ns() - age
        return {
            "unused_for_days": options.unused_for,
            "cutoff": _core.format_utc_time(cutoff),
            "cutoff_ns": cutoff,
        }
    try:
        return {"max_size_bytes": _core.parse_size_bytes(options.max_size, "--max-size")}
    except ValueError as error:
        raise UsageError(str(error)) from error


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _size(value: int) -> str:
    return str(_core.format_size_human(value))


def plan_table(plan: dict[str, Any]) -> str:
    """The plan for people, as the native ``cache prune --format table`` prints it."""
    criterion = plan["criterion"]
    if "max_size_bytes" in criterion:
        text = (
            "plan: remove the least recently recorded engines until the total is at most "
            + _size(criterion["max_size_bytes"])
        )
    else:
        text = f"plan: remove the engines recorded before {criterion['cutoff']}"
        if "unused_for_days" in criterion:
            text += f" (--unused-for {criterion['unused_for_days']})"
    text += f", in {plan['remote']}"
    text += " (dry run: nothing is changed)\n" if plan["dry_run"] else "\n"
    rows = [("NAME", "SIZE", "RECORDED_AT", "ACTION")]
    rows += [
        (entry["file_name"], _size(entry["size_bytes"]), entry["recorded_at"], "remove")
        for entry in plan["selected"]
    ]
    rows += [
        (
            entry["file_name"],
            _size(entry["size_bytes"]),
            entry["recorded_at"],
            "keep: " + one_line(entry["reason"]),
        )
        for entry in plan["excluded"]
    ]
    text += aligned_rows(rows)
    text += (
        f"{_plural(len(plan['selected']), 'engine', 'engines')} selected "
        f"({_size(plan['selected_bytes'])}) of {_size(plan['total_size_bytes'])}; "
        f"projected total {_size(plan['projected_total_bytes'])}"
        + ("" if plan["attainable"] else ", above the size limit")
        + "\n"
    )
    return f"{text}{plan['notice']}\n"


def result_table(plan: dict[str, Any], result: dict[str, Any]) -> str:
    """What happened to each selected engine, then the totals (the native layout)."""
    if result["dry_run"]:
        return (
            "result: dry run, nothing removed; projected total "
            f"{_size(result['projected_total_bytes'])}\n"
        )
    outcomes = {entry["file_name"]: "removed" for entry in result["removed"]}
    outcomes.update(
        {entry["file_name"]: "failed: " + one_line(entry["reason"]) for entry in result["failed"]}
    )
    rows = [("NAME", "OUTCOME")]
    rows += [
        (entry["file_name"], outcomes.get(entry["file_name"], "kept")) for entry in plan["selected"]
    ]
    text = "result:\n" + aligned_rows(rows)
    text += (
        f"{_plural(len(result['removed']), 'engine', 'engines')} removed "
        f"({_size(result['bytes_removed'])}), {len(result['failed'])} failed, "
        f"{len(result['missing'])} missing; remaining total "
        f"{_size(result['remaining_total_bytes'])}"
    )
    if "within_max_size" in result:
        text += ", within " if result["within_max_size"] else ", above "
        text += _size(result["max_size_bytes"])
    return text + "\n"


def _prune(args: list[str], prog: str) -> int:
    made = parser(
        prog,
        "Remove published engines from the remote cache: those published more "
        "than DAYS days ago, or the oldest until the remote total fits SIZE. Exit "
        "status: 0 success, 1 failed removal or unmet size, 2 invalid usage.",
    )
    add_remote_option(made, required_flag=True)
    made.add_argument("--unused-for", metavar="DAYS")
    made.add_argument("--max-size", metavar="SIZE")
    made.add_argument("--dry-run", action="store_true")
    add_format_option(made, JSON)
    options = made.parse_args(args)
    table = chosen_format(options, prog) == TABLE
    criterion = _criterion(options)
    config = remote_config(options.remote)
    objects = RemoteObjects(config)
    # Objects whose key obstore cannot name are pruned like engines (by escaped name): removing
    # a hostile object is what prune --remote is for. Deleted by their real key.
    entries, keys = [], {}
    listing = listed_engines(objects)
    for name, info in listing.entries + listing.unrepresentable:
        entry = {"file_name": name, "size_bytes": info.size, **time_fields(info.last_modified)}
        entries.append(entry)
        keys[id(entry)] = info.key
    total = sum(entry["size_bytes"] for entry in entries)
    oldest_first = sorted(entries, key=lambda entry: (entry["recorded_at_ns"], entry["file_name"]))
    if "cutoff_ns" in criterion:
        selected = [
            entry for entry in oldest_first if entry["recorded_at_ns"] < criterion["cutoff_ns"]
        ]
    else:
        selected, remaining = [], total
        for entry in oldest_first:
            if remaining <= criterion["max_size_bytes"]:
                break
            selected.append(entry)
            remaining -= entry["size_bytes"]
    selected_bytes = sum(entry["size_bytes"] for entry in selected)
    projected = total - selected_bytes
    limit = criterion.get("max_size_bytes")
    plan = {
        "remote": config.url,
        "dry_run": options.dry_run,
        "criterion": criterion,
        "total_size_bytes": total,
        "selected": selected,
        "selected_bytes": selected_bytes,
        "projected_total_bytes": projected,
        "excluded": [],
        "attainable": limit is None or projected <= limit,
        "notice": NOTICE,
    }
    if table:
        print(plan_table(plan), end="", flush=True)
    else:
        print_json({"plan": plan})
    removed, failed = [], []
    if not options.dry_run:
        for entry in selected:
            try:
                objects.delete(keys[id(entry)])
            except RemoteUnavailable as error:
                failed.append({"file_name": entry["file_name"], "reason": str(error)})
                continue
            removed.append(entry)
        remaining = listed_engines(objects)
        remaining_total = sum(
            info.size for _name, info in remaining.entries + remaining.unrepresentable
        )
    else:
        remaining_total = total
    result: dict[str, Any] = {
        "dry_run": options.dry_run,
        "removed": removed,
        "excluded": [],
        "failed": failed,
        "missing": [],
        "bytes_removed": sum(entry["size_bytes"] for entry in removed),
        "remaining_total_bytes": remaining_total,
    }
    if options.dry_run:
        result["projected_total_bytes"] = projected
    within = True
    if limit is not None:
        within = (projected if options.dry_run else remaining_total) <= limit
        result.update(max_size_bytes=limit, within_max_size=within)
    if table:
        print(result_table(plan, result), end="", flush=True)
    else:
        print_json({"result": result})
    return EXIT_SUCCESS if not failed and within else EXIT_FAILURE


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _prune(args, prog))
