"""What ``tensoracle cache push|pull`` and ``cache list|prune --remote`` share: options, the
remote cache they name, the local cache directory, and error reporting with the exit status of
the native ``cache`` subcommands (0 success, 1 failure, 2 invalid usage)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from tensoracle import _core
from tensoracle.cache.remote.config import REMOTE, RemoteConfig, configure
from tensoracle.cache.remote.objects import ENGINES, ObjectInfo, RemoteObjects, RemoteUnavailable
from tensoracle.cli.output_format import TABLE
from tensoracle.terminal_text import EscapedText, terminal_text

EXIT_SUCCESS = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Invalid usage: printed with the usage line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse with exit status 2 on usage errors raised as UsageError (no sys.exit inside)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parser(prog: str, description: str) -> Parser:
    made = Parser(prog=prog, description=description)
    made.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="Local cache directory instead of $XDG_CACHE_HOME/tensoracle (or ~/.cache/tensoracle; "
        "on Windows %%USERPROFILE%%\\.cache\\tensoracle)",
    )
    return made


def add_remote_option(made: argparse.ArgumentParser, *, required_flag: bool) -> None:
    help_text = (
        f"The remote cache, s3://BUCKET[/PREFIX]; without a value, ${REMOTE}. Endpoint and "
        "credentials come from the AWS_* variables S3 tools use"
    )
    if required_flag:
        made.add_argument("--remote", nargs="?", const="", metavar="URL", help=help_text)
    else:
        made.add_argument("--remote", default="", metavar="URL", help=help_text)


def remote_config(value: str | None) -> RemoteConfig:
    config = configure(value or None)
    if config is None:
        raise UsageError(f"no remote cache: pass --remote s3://BUCKET[/PREFIX] or set {REMOTE}")
    return config


def cache_directory(value: str | None) -> Path:
    if value is not None and not value:
        raise UsageError("--cache-dir: the directory must not be empty")
    chosen = Path(value) if value else Path(_core.default_cache_directory())
    return Path(os.path.abspath(chosen))


def time_fields(moment: datetime) -> dict[str, Any]:
    nanoseconds = int(moment.timestamp()) * 10**9 + moment.microsecond * 1000
    return {"recorded_at": _core.format_utc_time(nanoseconds), "recorded_at_ns": nanoseconds}


@dataclass(frozen=True)
class EngineListing:
    """The objects under ``engines/``: published engines by file name, and those whose key
    obstore cannot represent (an empty segment, a control character), by escaped name."""

    entries: list[tuple[str, ObjectInfo]]
    unrepresentable: list[tuple[str, ObjectInfo]]

    def unrecognized(self) -> list[dict[str, Any]]:
        """The unrepresentable objects as unrecognized listing entries, names escaped."""
        return [
            {
                "file_name": name,
                "size_bytes": info.size,
                "temporary": False,
                **time_fields(info.last_modified),
                "status": "unrecognized",
                "reason": EscapedText(f"{UNREPRESENTABLE}: {ENGINES}{name}"),
            }
            for name, info in self.unrepresentable
        ]


UNREPRESENTABLE = "the object's key has an empty segment or a control character"


def listed_engines(objects: RemoteObjects) -> EngineListing:
    """Every object under ``engines/``, each list sorted by name; a key obstore cannot represent
    is reported, never an error for the listing."""
    found, odd = [], []
    for info in objects.list(ENGINES):
        name = info.key[len(ENGINES) :]
        if not info.representable:
            odd.append((terminal_text(name), info))
        elif name.endswith(".engine") and "/" not in name:
            found.append((name, info))
    return EngineListing(
        sorted(found, key=lambda item: item[0].encode()),
        sorted(odd, key=lambda item: item[0].encode()),
    )


def remote_entries(objects: RemoteObjects) -> list[tuple[str, Any]]:
    """(file name, ObjectInfo) of every published engine, sorted by name."""
    return listed_engines(objects).entries


def print_json(document: dict[str, Any]) -> None:
    print(json.dumps(document, sort_keys=True, separators=(",", ":")), flush=True)


def print_report(
    document: dict[str, Any], output: str, table: Callable[[dict[str, Any]], str]
) -> None:
    """Prints ``document`` in the ``--format`` chosen: ``table(document)`` for table, else one
    JSON line (``print_json``)."""
    if output == TABLE:
        print(table(document), end="", flush=True)
    else:
        print_json(document)


def run(prog: str, usage: str, body: Callable[[], int]) -> int:
    """Runs ``body``; usage errors give status 2 with the usage line, remote failures and other
    errors status 1, each as one line on stderr prefixed by ``prog``."""
    try:
        return body()
    except UsageError as error:
        print(
            f"{prog}: {error}\nusage: {usage}\nRun '{prog} --help' for more information.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except (RemoteUnavailable, OSError, ValueError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return EXIT_FAILURE
