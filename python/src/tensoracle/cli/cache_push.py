"""``tensoracle cache push [ENTRY...]``: publishes local saved engines to the remote cache.

Every entry is verified first (header, plan checksum, and a file name that is the identity of
its conditions), then published create-only, signed when ``TENSORACLE_REMOTE_SIGNING_KEY`` is
set. An entry already published is left as it is (``already_present``). Prints one JSON object, or
with ``--format table`` a row per entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.config import SIGNING_KEY, RemoteConfig
from tensoracle.cache.remote.fleet import load_keys, publish_bytes
from tensoracle.cache.remote.objects import RemoteObjects
from tensoracle.cli.output_format import (
    JSON,
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
    cache_directory,
    parser,
    print_report,
    remote_config,
    run,
)
from tensoracle.errors import EngineCacheError

USAGE = "tensoracle cache push [ENTRY...] [--remote URL] [--cache-dir DIR] [--format json|table]"


def publishing_key(config: RemoteConfig) -> Any:
    """The key this node signs what it publishes with, or None in an unsigned fleet. A node that
    trusts only signed engines but has no signing key must not publish: UsageError."""
    signing, verify = load_keys(config)
    if signing is None and verify is not None:
        raise UsageError(
            f"this node trusts only signed engines but has no signing key: set {SIGNING_KEY} to "
            "publish (an unsigned object would block the entry for every node)"
        )
    return signing


def push_entry(objects: RemoteObjects, path: Path, signing: Any) -> tuple[bool, int]:
    """Verifies the saved entry at ``path`` (header, plan checksum, and a file name that is the
    identity of its conditions), then publishes it create-only. Returns (True when this call
    published it, False when it was already published; its size in bytes). Raises OSError or
    EngineCacheError when it cannot be read or verified, RemoteUnavailable when the store fails."""
    data = path.read_bytes()
    _core.verify_remote_object(data, str(path), path.name, None, None)
    return publish_bytes(objects, path.name, data, signing).published, len(data)


def table(report: dict[str, Any]) -> str:
    """A row per entry, by name (outcome, size, why it failed), then the counts."""
    rows = [
        (str(item["file_name"]), outcome, _core.format_size_human(int(item["size_bytes"])), "")
        for outcome, key in (("pushed", "pushed"), ("already present", "already_present"))
        for item in report[key]
    ]
    rows += [
        (item["file_name"], "failed", "-", one_line(item["reason"])) for item in report["failed"]
    ]
    rows.sort(key=lambda row: row[0].encode())
    signed = "signed" if report["signed"] else "unsigned"
    return (
        aligned_rows([("NAME", "OUTCOME", "SIZE", "REASON"), *rows])
        + f"{len(report['pushed'])} pushed ({signed}), {len(report['already_present'])} already "
        f"present, {len(report['failed'])} failed, from {report['directory']} to "
        f"{report['remote']}\n"
    )


def _push(args: list[str], prog: str) -> int:
    made = parser(
        prog,
        "Publish saved engines (all of them, or the ENTRY file names given) to "
        "the remote cache, create-only. Exit status: 0 success, 1 an entry failed, "
        "2 invalid usage.",
    )
    made.add_argument("entries", nargs="*", metavar="ENTRY", help="file names in the cache")
    add_remote_option(made, required_flag=False)
    add_format_option(made, JSON)
    options = made.parse_args(args)
    output = chosen_format(options, prog)
    config = remote_config(options.remote)
    directory = cache_directory(options.cache_dir)
    signing = publishing_key(config)
    names = (
        options.entries
        or sorted(path.name for path in directory.glob("*.engine") if path.is_file())
        if directory.is_dir()
        else options.entries
    )
    objects = RemoteObjects(config)
    pushed: list[dict[str, str | int]] = []
    present: list[dict[str, str | int]] = []
    failed: list[dict[str, str]] = []
    for name in names:
        path = directory / Path(name).name
        try:
            published, size = push_entry(objects, path, signing)
        except (OSError, EngineCacheError) as error:
            failed.append({"file_name": path.name, "reason": str(error)})
            continue
        item: dict[str, str | int] = {"file_name": path.name, "size_bytes": size}
        (pushed if published else present).append(item)
    report = {
        "remote": config.url,
        "directory": str(directory),
        "signed": signing is not None,
        "pushed": pushed,
        "already_present": present,
        "failed": failed,
    }
    print_report(report, output, table)
    return EXIT_FAILURE if failed else EXIT_SUCCESS


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _push(args, prog))
