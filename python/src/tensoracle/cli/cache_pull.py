"""``tensoracle cache pull [ENTRY...]``: downloads published engines into the local cache.

Each object takes the path of ``open_engine``'s download (``fleet.receive``): under the entry's
exclusive lock (taken by file name, since the identity is only known from the object's header),
it is streamed into the store's temporary file as it arrives, judged from its size, preamble and
(without a verify key) header before the plan is read, hashed as it is written, and verified
whole at the end (format, header, plan checksum, a file name that is the identity of its
conditions, and the signature when ``TENSORACLE_REMOTE_VERIFY_KEY`` is set) before the rename
makes it the entry. Memory stays bounded whatever size an object announces; a refused object
leaves no file behind. Entries already saved locally are left alone. Prints one JSON object, or
with ``--format table`` a row per entry.
"""

from __future__ import annotations

from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.fleet import load_keys, receive
from tensoracle.cache.remote.objects import RemoteObjects, TooLarge, engine_key
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
    add_remote_option,
    cache_directory,
    parser,
    print_report,
    remote_config,
    remote_entries,
    run,
)
from tensoracle.errors import EngineCacheError

USAGE = "tensoracle cache pull [ENTRY...] [--remote URL] [--cache-dir DIR] [--format json|table]"


def table(report: dict[str, Any]) -> str:
    """A row per entry, by name (outcome, size, signed, why refused), then the counts."""
    rows = [
        (
            item["file_name"],
            "pulled",
            _core.format_size_human(item["size_bytes"]),
            "yes" if item["signed"] else "no",
            "",
        )
        for item in report["pulled"]
    ]
    rows += [
        (item["file_name"], "already present", "-", "-", "") for item in report["already_present"]
    ]
    rows += [
        (item["file_name"], "refused", "-", "-", one_line(item["reason"]))
        for item in report["refused"]
    ]
    rows.sort(key=lambda row: row[0].encode())
    return (
        aligned_rows([("NAME", "OUTCOME", "SIZE", "SIGNED", "REASON"), *rows])
        + f"{len(report['pulled'])} pulled, {len(report['already_present'])} already present, "
        f"{len(report['refused'])} refused, from {report['remote']} into {report['directory']}\n"
    )


def _pull(args: list[str], prog: str) -> int:
    made = parser(
        prog,
        "Download published engines (all of them, or the ENTRY file names "
        "given) into the local cache, verified. Exit status: 0 success, 1 an entry "
        "was refused or missing, 2 invalid usage.",
    )
    made.add_argument("entries", nargs="*", metavar="ENTRY", help="file names in the remote cache")
    add_remote_option(made, required_flag=False)
    add_format_option(made, JSON)
    options = made.parse_args(args)
    output = chosen_format(options, prog)
    config = remote_config(options.remote)
    directory = cache_directory(options.cache_dir)
    _signing, verify = load_keys(config)
    objects = RemoteObjects(config)
    names = options.entries or [name for name, _info in remote_entries(objects)]
    store = _core.Store(str(directory))
    pulled: list[dict[str, Any]] = []
    present: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for name in names:
        if "/" in name or not name.endswith(".engine") or name.startswith("."):
            refused.append({"file_name": name, "reason": "not the file name of a saved engine"})
            continue
        if (directory / name).exists():
            present.append({"file_name": name})
            continue
        with store.lock_entry(name, True):
            if (directory / name).exists():  # saved by another process meanwhile
                present.append({"file_name": name})
                continue
            key = engine_key(name)
            try:
                received = receive(objects, key, name, None, verify, store)
            except (EngineCacheError, TooLarge) as error:
                refused.append({"file_name": name, "reason": str(error)})
                continue
        if received is None:
            refused.append({"file_name": name, "reason": f"{objects.url(key)} does not exist"})
            continue
        verified, _saved = received
        pulled.append(
            {"file_name": name, "size_bytes": verified.engine_bytes, "signed": verified.is_signed}
        )
    report = {
        "remote": config.url,
        "directory": str(directory),
        "pulled": pulled,
        "already_present": present,
        "refused": refused,
    }
    print_report(report, output, table)
    return EXIT_FAILURE if refused else EXIT_SUCCESS


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _pull(args, prog))
