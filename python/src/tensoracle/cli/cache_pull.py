"""``tensoracle cache pull [ENTRY...]``: downloads published engines into the local cache.

Each object takes the path of ``open_engine``'s download (``fleet.receive``): under the entry's
exclusive lock (taken by file name, since the identity is only known from the object's header),
it is streamed into the store's temporary file as it arrives, judged from its size, preamble and
(without a verify key) header before the plan is read, hashed as it is written, and verified
whole at the end (format, header, plan checksum, a file name that is the identity of its
conditions, and the signature when ``TENSORACLE_REMOTE_VERIFY_KEY`` is set) before the rename
makes it the entry. Memory stays bounded whatever size an object announces; a refused object
leaves no file behind. Entries already saved locally are left alone. Prints one JSON object, or
with ``--format table`` a row per entry. On a terminal, objects over a few MiB show a download bar
on stderr (``transfer_progress``) unless ``--quiet``.

With ``--manifest FILE`` exactly the entries of a deployment manifest (``tensoracle build
--manifest``, docs/deploy.md) are pulled, from the manifest's remote cache unless ``--remote`` or
``TENSORACLE_REMOTE`` names another, each also checked against its entry (``deploy_pull``): the
object must hold the entry's conditions (given to the receiver as the identity asked for, as
``open_engine`` gives them), plan size and checksum, engine size and, where the manifest records
it, signature. An entry already saved locally is judged from its header the same way; one that
differs is refused, and left as it is.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.config import REMOTE, TRUST_POLICY, VERIFY_KEY, manifest_trust
from tensoracle.cache.remote.fleet import load_keys, receive
from tensoracle.cache.remote.objects import RemoteObjects, TooLarge, engine_key
from tensoracle.cli import deploy_manifest, deploy_pull
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
    remote_entries,
    run,
)
from tensoracle.cli.transfer_progress import SHOWN_FROM_BYTES, TransferProgress
from tensoracle.errors import CorruptEngineError, EngineCacheError

USAGE = (
    "tensoracle cache pull [ENTRY... | --manifest FILE [--trust-policy POLICY] "
    "[--minimum-version N]] [--remote URL] [--cache-dir DIR] "
    "[--format json|table] [--quiet]"
)


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


def _read_manifest(value: str, options: Any, directory: Path) -> deploy_pull.Manifest:
    """The manifest, trusted as an application opening engines from ``directory`` trusts it:
    with ``$TENSORACLE_REMOTE_VERIFY_KEY`` or ``--trust-policy`` it must be a signed manifest
    they accept (and its version is recorded in the folder)."""
    if not value:
        raise UsageError("--manifest: the file name must not be empty")
    # A policy lists every key it trusts for the manifest; the verify key, if set too, still
    # checks each object's signature (as for every pull).
    chosen = manifest_trust(options.trust_policy or None)
    trust = deploy_pull.Trust(
        directory,
        chosen.key_file,
        chosen.key_text,
        None if chosen.policy is None else Path(chosen.policy),
        options.minimum_version,
    )
    return deploy_pull.read(Path(value), trust)


def _remote(option: str, manifest: deploy_pull.Manifest | None) -> Any:
    """The remote cache: --remote, else $TENSORACLE_REMOTE, else the manifest's."""
    if option or os.environ.get(REMOTE) or manifest is None:
        return remote_config(option)
    if manifest.remote is None:
        raise UsageError(
            f"no remote cache: {manifest.path} records none (it was written without --push); "
            f"pass --remote s3://BUCKET[/PREFIX] or set {REMOTE}"
        )
    try:
        return remote_config(manifest.remote)
    except ValueError as error:
        raise ValueError(f"{manifest.path}: remote: {error}") from error


def _fetch(
    expected: deploy_pull.Expected,
    objects: RemoteObjects,
    verify: Any,
    store: Any,
    progress: TransferProgress,
) -> dict[str, Any]:
    """Downloads the manifest's entry (the caller holds its lock): the report's item, pulled, or
    refused (with its ``reason``)."""
    name = expected.file_name
    key = engine_key(name)
    url = objects.url(key)
    judge = progress.counted(
        name, functools.partial(deploy_pull.ManifestReceiver, expected=expected, url=url)
    )
    try:
        received = receive(objects, key, name, expected.identity, verify, store, judge)
    except (EngineCacheError, TooLarge) as error:
        return {"file_name": name, "reason": str(error)}
    if received is None:
        return {"file_name": name, "reason": f"{url} does not exist"}
    verified, _saved = received
    return {"file_name": name, "size_bytes": verified.engine_bytes, "signed": verified.is_signed}


def _pull_manifest(
    manifest: deploy_pull.Manifest,
    objects: RemoteObjects,
    verify: Any,
    store: Any,
    directory: Path,
    progress: TransferProgress,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(pulled, already present, refused) for the manifest's entries, each checked against it."""
    pulled: list[dict[str, Any]] = []
    present: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for expected in manifest.entries:
        name = expected.file_name
        path = directory / name
        if not os.path.lexists(path):  # a link (even a dangling one) is judged, never followed
            with store.lock_entry(name, True):
                store.remove_abandoned_temporaries(name)  # left by a pull that was killed
                # else saved by another process meanwhile: judged below, as a saved entry
                outcome = (
                    None if path.exists() else _fetch(expected, objects, verify, store, progress)
                )
            if outcome is not None:
                (refused if "reason" in outcome else pulled).append(outcome)
                continue
        try:
            deploy_pull.check_saved(path, expected)
        except (EngineCacheError, OSError) as error:
            refused.append({"file_name": name, "reason": str(error)})
            continue
        present.append({"file_name": name})
    return pulled, present, refused


def _check_present(path: Path) -> None:
    """Judges an entry already at ``path`` from its header, as a manifest pull does without the
    manifest's values: a link or anything but a regular file is refused (never followed or
    waited on), so is a damaged header (``CorruptEngineError``) or one whose conditions are not
    the identity its name says (``CorruptEngineError``). The file is only read."""
    header, size = deploy_manifest.saved_prefix(path)
    conditions, _references, _offset = _core.decode_engine_header(header, size, str(path))
    recorded = _core.recorded_identity(conditions).file_name
    if recorded != path.name:
        raise CorruptEngineError(
            f"the saved entry {path} records the conditions of {recorded}, not of its name: "
            "remove it and pull again",
            path,
        )


def _pull(args: list[str], prog: str) -> int:
    made = parser(
        prog,
        "Download published engines (all of them, the ENTRY file names given, or the entries "
        "of a deployment manifest) into the local cache, verified. Exit status: 0 success, 1 an "
        "entry was refused or missing, 2 invalid usage.",
    )
    made.add_argument("entries", nargs="*", metavar="ENTRY", help="file names in the remote cache")
    made.add_argument(
        "--manifest",
        metavar="FILE",
        help="pull exactly the entries of the deployment manifest FILE (tensoracle build "
        "--manifest), each checked against it; from the manifest's remote cache unless --remote "
        f"or ${REMOTE} names one",
    )
    made.add_argument(
        "--trust-policy",
        metavar="POLICY",
        help="with --manifest: accept only a signed manifest that this trust policy file's keys "
        f"accept (default: ${TRUST_POLICY}; without either, ${VERIFY_KEY} accepts one signed by "
        "that key)",
    )
    made.add_argument(
        "--minimum-version",
        metavar="N",
        type=int,
        default=0,
        help="with --manifest: refuse a signed manifest of a lower version",
    )
    made.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="draw no download progress on stderr (drawn only on a terminal, for objects over "
        f"{SHOWN_FROM_BYTES >> 20} MiB)",
    )
    add_remote_option(made, required_flag=False)
    add_format_option(made, JSON)
    options = made.parse_args(args)
    output = chosen_format(options, prog)
    if options.manifest is not None and options.entries:
        raise UsageError("give ENTRY names or --manifest FILE, not both")
    if options.manifest is None and (options.trust_policy or options.minimum_version):
        raise UsageError("--trust-policy and --minimum-version apply to --manifest FILE")
    if options.minimum_version < 0:
        raise UsageError(f"--minimum-version {options.minimum_version}: expected a number >= 0")
    directory = cache_directory(options.cache_dir)
    manifest = (
        None if options.manifest is None else _read_manifest(options.manifest, options, directory)
    )
    config = _remote(options.remote, manifest)
    _signing, verify = load_keys(config)
    objects = RemoteObjects(config)
    store = _core.Store(str(directory))
    with TransferProgress(quiet=options.quiet) as progress:
        if manifest is not None:
            downloads = _pull_manifest(manifest, objects, verify, store, directory, progress)
        else:
            names = options.entries or [name for name, _info in remote_entries(objects)]
            downloads = _pull_named(names, objects, verify, store, directory, progress)
    return _report(config.url, directory, *downloads, output)


def _pull_named(
    names: list[str],
    objects: RemoteObjects,
    verify: Any,
    store: Any,
    directory: Path,
    progress: TransferProgress,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(pulled, already present, refused) for the entries named."""
    pulled: list[dict[str, Any]] = []
    present: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for name in names:
        if "/" in name or not name.endswith(".engine") or name.startswith("."):
            refused.append({"file_name": name, "reason": "not the file name of a saved engine"})
            continue
        path = directory / name
        present_now = os.path.lexists(path)  # a link (even a dangling one) is judged, not followed
        if not present_now:
            with store.lock_entry(name, True):
                store.remove_abandoned_temporaries(name)  # left by a pull that was killed
                present_now = os.path.lexists(path)  # saved by another process meanwhile
                if not present_now:
                    received = _receive_named(objects, name, verify, store, progress)
        if present_now:
            try:
                _check_present(path)
            except (EngineCacheError, OSError) as error:
                refused.append({"file_name": name, "reason": str(error)})
                continue
            present.append({"file_name": name})
            continue
        if isinstance(received, str):
            refused.append({"file_name": name, "reason": received})
            continue
        if received is None:
            refused.append(
                {"file_name": name, "reason": f"{objects.url(engine_key(name))} does not exist"}
            )
            continue
        verified, _saved = received
        pulled.append(
            {"file_name": name, "size_bytes": verified.engine_bytes, "signed": verified.is_signed}
        )
    return pulled, present, refused


def _receive_named(
    objects: RemoteObjects, name: str, verify: Any, store: Any, progress: TransferProgress
) -> Any:
    """``receive`` of the object of entry ``name``: (verified, saved), None when the object does
    not exist, or the reason it was refused."""
    try:
        return receive(objects, engine_key(name), name, None, verify, store, progress.counted(name))
    except (EngineCacheError, TooLarge) as error:
        return str(error)


def _report(
    remote: str,
    directory: Path,
    pulled: list[dict[str, Any]],
    present: list[dict[str, Any]],
    refused: list[dict[str, Any]],
    output: str,
) -> int:
    report = {
        "remote": remote,
        "directory": str(directory),
        "pulled": pulled,
        "already_present": present,
        "refused": refused,
    }
    print_report(report, output, table)
    return EXIT_FAILURE if refused else EXIT_SUCCESS


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _pull(args, prog))
