"""Installs the TensorRT 11 C++ headers the plugin builds compile against, pinned file by file.

The headers are the public ``include/`` folder (and the ``LICENSE``) of NVIDIA's open-source
TensorRT repository, github.com/NVIDIA/TensorRT, at the commits of its releases. The lock file
``tools/tensorrt-headers.json`` names, for each TensorRT version, the release's tag and commit and
the SHA-256 of every file. GitHub's archive tarballs are not byte-stable, so each file is fetched
on its own, from ``<base-url>/<commit>/<path>``, and checked against its pin.

Usage (``make tensorrt-11-headers`` runs the first form)::

    python tools/tensorrt_headers.py --dest build/tensorrt-headers
    python tools/tensorrt_headers.py --dest build/tensorrt-headers --local DIR

``--local DIR`` (for machines without internet) copies ``DIR/<version>/include/...`` and
``DIR/<version>/LICENSE`` instead of downloading them, with the same checks. The result is
``DEST/<version>/include/...`` and ``DEST/<version>/LICENSE`` for every version of the lock file.

Every file of every version is checked before anything is written. A version is written into a
temporary folder beside DEST and renamed into place once complete, so a failed or interrupted run
leaves no partly installed version and keeps what was installed before. A version already
installed whose files all match their pins is left as it is.

Exit status: 0 when every version is installed, 1 when a file could not be fetched or does not
match its pin (nothing is installed then), 2 for a usage error (arguments or the lock file).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = Path(__file__).resolve().with_name("tensorrt-headers.json")
DEFAULT_BASE_URL = "https://raw.githubusercontent.com/NVIDIA/TensorRT"
TIMEOUT_SECONDS = 30.0
ATTEMPTS = 4
RETRY_DELAY_SECONDS = 1.0
COMMIT = re.compile(r"[0-9a-f]{40}")
SHA256 = re.compile(r"[0-9a-f]{64}")
VERSION = re.compile(r"[0-9]+(\.[0-9]+)+")


class UsageError(Exception):
    """A bad argument or lock file: exit status 2."""


class FetchError(Exception):
    """A file that could not be read from its source, with the reason; `unreachable` when the
    server itself could not be reached (no answer after every attempt)."""

    def __init__(self, reason: str, *, unreachable: bool = False) -> None:
        super().__init__(reason)
        self.unreachable = unreachable


@dataclass(frozen=True)
class Release:
    version: str
    tag: str
    commit: str
    files: dict[str, str]  # path relative to the repository root -> SHA-256


@dataclass(frozen=True)
class Problem:
    """A pinned file that could not be read from its source (`error`) or does not match its pin."""

    version: str
    path: str
    source: str
    expected: str
    observed: str | None
    error: str | None = None


def load_lock(path: Path) -> list[Release]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read the lock file {path}: {error}") from error
    if not isinstance(data, dict) or not data:
        raise UsageError(
            f"lock file {path}: expected an object of versions, found {data!r:.80}"
        )
    releases = []
    for version, entry in data.items():
        where = f"lock file {path}, version {version!r}"
        if not VERSION.fullmatch(version):
            raise UsageError(f"{where}: the version is not dotted numbers")
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: expected an object, found {entry!r:.80}")
        tag, commit, files = entry.get("tag"), entry.get("commit"), entry.get("files")
        if not isinstance(tag, str) or not tag:
            raise UsageError(
                f"{where}: 'tag' must be a non-empty string, found {tag!r}"
            )
        if not isinstance(commit, str) or not COMMIT.fullmatch(commit):
            raise UsageError(
                f"{where}: 'commit' must be 40 lowercase hex digits, found {commit!r}"
            )
        if not isinstance(files, dict) or not files:
            raise UsageError(
                f"{where}: 'files' must be a non-empty object, found {files!r:.80}"
            )
        for name, digest in files.items():
            parts = name.split("/")
            if (
                name.startswith("/")
                or "\\" in name
                or any(p in ("", ".", "..") for p in parts)
            ):
                raise UsageError(
                    f"{where}: file path {name!r} is not a plain relative path"
                )
            if not isinstance(digest, str) or not SHA256.fullmatch(digest):
                raise UsageError(
                    f"{where}: the SHA-256 of {name!r} must be 64 lowercase hex digits, "
                    f"found {digest!r}"
                )
        releases.append(Release(version, tag, commit, dict(files)))
    return releases


def fetch_url(url: str) -> bytes:
    """The body of `url`; transient failures (timeouts, resets, 5xx, 429) are retried."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
                body: bytes = response.read()
                return body
        except urllib.error.HTTPError as error:
            reason = f"HTTP {error.code} {error.reason}"
            if error.code < 500 and error.code != 429:
                raise FetchError(reason) from error
            if attempt == ATTEMPTS:
                raise FetchError(f"{reason} (tried {ATTEMPTS} times)") from error
        except (urllib.error.URLError, OSError) as error:
            reason = str(getattr(error, "reason", error))
        if attempt == ATTEMPTS:
            raise FetchError(f"{reason} (tried {ATTEMPTS} times)", unreachable=True)
        time.sleep(RETRY_DELAY_SECONDS * attempt)
    raise AssertionError("unreachable")


def read_local(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as error:
        raise FetchError("no such file") from error
    except OSError as error:
        raise FetchError(error.strerror or str(error)) from error


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def installed_and_verified(release: Release, target: Path) -> bool:
    if not target.is_dir():
        return False
    for name, digest in release.files.items():
        try:
            if sha256((target / name).read_bytes()) != digest:
                return False
        except OSError:
            return False
    return True


def gather(
    release: Release, base_url: str, local: Path | None
) -> tuple[dict[str, bytes], list[Problem], bool]:
    """Every pinned file of `release` from its source, the files that failed their check, and
    whether it stopped early because the server could not be reached (each further file would
    wait through the same retries)."""
    contents: dict[str, bytes] = {}
    problems: list[Problem] = []
    for name, expected in release.files.items():
        try:
            if local is None:
                source = f"{base_url}/{release.commit}/{urllib.parse.quote(name)}"
                data = fetch_url(source)
            else:
                source = str(local / release.version / name)
                data = read_local(Path(source))
        except FetchError as error:
            problems.append(
                Problem(release.version, name, source, expected, None, str(error))
            )
            if error.unreachable:
                return contents, problems, True
            continue
        observed = sha256(data)
        if observed != expected:
            problems.append(Problem(release.version, name, source, expected, observed))
        else:
            contents[name] = data
    return contents, problems, False


def install(release: Release, contents: dict[str, bytes], dest: Path) -> None:
    """Writes `contents` into a temporary folder beside `dest`, then renames it to dest/<version>;
    a previous dest/<version> (one that no longer verifies) is moved aside first and removed
    once replaced, or put back if the rename fails."""
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / release.version
    prefix = f".{dest.name}-{release.version}-"
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=dest.parent))
    aside: Path | None = None
    try:
        for name, data in contents.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if target.exists() or target.is_symlink():
            aside = Path(tempfile.mkdtemp(prefix=prefix + "old-", dir=dest.parent))
            target.rename(aside / "previous")
        staging.rename(target)
    except BaseException:
        if aside is not None and not target.exists() and not target.is_symlink():
            (aside / "previous").rename(target)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


def describe(
    problems: list[Problem], releases: list[Release], local: Path | None, stopped: bool
) -> str:
    lines = []
    for problem in problems:
        wrong = (
            "could not be read"
            if problem.observed is None
            else "does not match its pin"
        )
        observed = (
            f"sha256 {problem.observed}"
            if problem.observed
            else f"none ({problem.error})"
        )
        lines += [
            f"TensorRT {problem.version}: {problem.path} {wrong}",
            f"  source:   {problem.source}",
            f"  expected: sha256 {problem.expected}",
            f"  observed: {observed}",
        ]
    if stopped:
        lines.append("The server could not be reached, so no further file was tried.")
    versions = sorted({problem.version for problem in problems})
    if stopped:
        versions = [r.version for r in releases]
    pins = "; ".join(
        f"commit {r.commit} (tag {r.tag}) for {r.version}"
        for r in releases
        if r.version in versions
    )
    lines.append(
        "Nothing was installed. To fix it, set TENSORRT_HEADERS=DIR (or pass --local DIR) "
        "to a folder holding <version>/include/NvInfer.h and <version>/LICENSE: the include/ "
        f"folder and LICENSE of github.com/NVIDIA/TensorRT, unchanged, at {pins}."
    )
    return "\n".join(lines)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tensorrt_headers.py",
        description="Install the TensorRT 11 headers of NVIDIA's open-source repository, "
        "each file checked against its SHA-256 in the lock file.",
    )
    parser.add_argument(
        "--dest", type=Path, required=True, help="install into DEST/<version>/include"
    )
    parser.add_argument(
        "--local",
        type=Path,
        metavar="DIR",
        help="copy DIR/<version>/include and DIR/<version>/LICENSE instead of downloading",
    )
    parser.add_argument(
        "--base-url",
        default=DEFAULT_BASE_URL,
        help=f"where <commit>/<path> is downloaded from (default {DEFAULT_BASE_URL})",
    )
    parser.add_argument(
        "--lock",
        type=Path,
        default=LOCK_FILE,
        help="the lock file (default: %(default)s)",
    )
    return parser.parse_args(argv)


def run(arguments: argparse.Namespace) -> int:
    releases = load_lock(arguments.lock)
    local: Path | None = arguments.local
    if local is not None and not local.is_dir():
        raise UsageError(
            f"--local {local}: no such folder; it must hold <version>/include/NvInfer.h"
        )
    base_url = arguments.base_url.rstrip("/")
    if local is None and urllib.parse.urlsplit(base_url).scheme not in (
        "http",
        "https",
    ):
        raise UsageError(
            f"--base-url {arguments.base_url!r}: expected an http or https URL"
        )
    dest: Path = arguments.dest
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"--dest {dest}: exists and is not a folder")

    pending: list[tuple[Release, dict[str, bytes]]] = []
    stopped = False
    problems: list[Problem] = []
    for release in releases:
        if installed_and_verified(release, dest / release.version):
            print(
                f"TensorRT {release.version}: {len(release.files)} files already installed "
                f"and verified in {dest / release.version}"
            )
            continue
        contents, failed, stopped = gather(release, base_url, local)
        problems += failed
        pending.append((release, contents))
        if stopped:
            break
    if problems:
        print(describe(problems, releases, local, stopped), file=sys.stderr)
        return 1
    for release, contents in pending:
        install(release, contents, dest)
        source = (
            local / release.version
            if local is not None
            else f"{base_url}/{release.commit}"
        )
        print(
            f"TensorRT {release.version}: {len(contents)} files verified from {source}, "
            f"installed in {dest / release.version}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        return run(arguments)
    except UsageError as error:
        print(f"tensorrt_headers.py: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(
            f"tensorrt_headers.py: cannot install into {arguments.dest}: {error}",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
