"""``tensoracle build MODULE:ATTRIBUTE``: prepares the engines of a model package's recipes, and
with ``--push`` publishes them to the remote cache, so the package's users download them.

Each recipe runs ``recipe.prepare`` (no CUDA device needed with TensorRT-RTX), for the targets of
``--targets`` when given. With ``--push`` the remote cache is consulted and published to as
``prepare_engine(remote=URL)`` does (signed when ``TENSORACLE_REMOTE_SIGNING_KEY`` is set), and an
entry that was already in the local cache is published the way ``cache push`` publishes it when
the remote cache lacks it. Without ``--push`` only the local cache is used, whatever
``TENSORACLE_REMOTE`` says. A recipe that fails is reported in its row; the others still run.

What is reported comes from what the calls return, never from the absence of a warning (a
recipe or ``PYTHONWARNINGS`` may ignore warnings): ``prepare`` says built or reused, and
publishing asks the remote cache whether it holds the saved entry (its header, the one this
build saved) and pushes it where it does not, so each row is published ("yes"), already
published ("already") or not ("no", with the reason).

The command runs in a child interpreter that must say it finished (``cli.completion``): a recipe
module that ends the process early (``os._exit(0)``) fails the command instead of leaving its
status 0. A module calling ``sys.exit`` while imported, and a recipe calling it while it builds,
are failures naming the module or recipe and the code.

With ``--manifest`` and ``--push``, an entry whose published object is another build than the
local cache's (one published before ``--force-rebuild`` built this one, or by another node while
this one reused its own) fails the command and no manifest is written: the manifest would record
this build's plan beside a signature over the other's bytes, refused at pull and at open. The
published object is not replaced (publishing is create-only, and other nodes may run it); the
message says how to deploy either build (``cli.deploy_manifest.fleet_object``).

With ``--encrypt-to PUB`` (repeatable: X25519 public keys, docs/encryption.md) every engine built
is saved encrypted for those recipients, sealed as it is written (the plaintext plan never
reaches the disk), and that sealed entry is what ``--push`` publishes: the remote cache and the
nodes that pull from it hold ciphertext only. A saved entry is reused only when it is encrypted
for exactly those keys; any other is built again. With ``--push``, a remote object that is not
the entry saved here (a plain copy published before, or one for other keys) is reported as not
published: publishing never replaces an object.

Exit status: 0 when every recipe succeeded (and with ``--push`` the remote cache holds every
entry), 1 when one failed or was not published or the manifest was not written, 2 for invalid
usage.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.config import REMOTE, configure
from tensoracle.cache.remote.objects import RemoteObjects, RemoteUnavailable, engine_key
from tensoracle.cache.remote.publication import Publication, PublishOutcome
from tensoracle.cli import build_shard, deploy_manifest
from tensoracle.cli.build_report import (
    ALREADY,
    BUILT,
    FAILED,
    NO,
    REUSED,
    YES,
    Row,
    document,
    table,
)
from tensoracle.cli.cache_push import publishing_key, push_entry
from tensoracle.cli.completion import run_to_completion
from tensoracle.cli.output_format import (
    JSON,
    TABLE,
    FormatError,
    add_format_option,
    chosen_format,
)
from tensoracle.cli.remote_cache import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    Parser,
    UsageError,
    print_json,
    run,
)
from tensoracle.engine.declaration import BuilderSettings
from tensoracle.engine.recipe import EngineRecipe
from tensoracle.engine.recipe_loader import RecipeSpecError, load_recipes
from tensoracle.errors import EngineCacheError, RemoteCacheWarning

USAGE = (
    "tensoracle build MODULE:ATTRIBUTE [--targets SM[,SM...]] [--push [URL]] [--force-rebuild] "
    "[--manifest FILE [--sign-key KEY]... [--manifest-version N] [--expires-in DAYS]] "
    "[--shard I/N] [--encrypt-to PUB]... [--format json|table]"
)


_STATES = {
    PublishOutcome.PUBLISHED: YES,
    PublishOutcome.ALREADY_PRESENT: ALREADY,
    PublishOutcome.NOT_PUBLISHED: NO,
}


@dataclass(frozen=True)
class Publisher:
    """Where ``--push`` publishes, and the key it signs with (None: unsigned)."""

    objects: RemoteObjects
    signing: Any
    encrypted: bool = False  # the entries are saved encrypted (--encrypt-to)

    @property
    def url(self) -> str:
        return self.objects.config.url

    def publish(self, path: Path, built: bool, forced: bool, warned: list[str]) -> Publication:
        """Makes sure the remote cache holds the entry saved at ``path``, judged from what the
        remote cache answers: PUBLISHED when this run put it there, ALREADY_PRESENT when it was
        published before, NOT_PUBLISHED with the reason otherwise. An entry this run built was
        published by ``prepare`` (create-only) when the remote object starts with the saved
        header; a remote object with another header is another build: published before when
        this run was forced to rebuild, else one this node did not use (``warned``: the
        RemoteCacheWarnings it saw, if any, say why). An entry the remote cache lacks is pushed
        as ``cache push`` pushes it."""
        key = engine_key(path.name)
        url = self.objects.url(key)
        try:
            if built or self.encrypted:
                header = deploy_manifest.saved_header(path)
                found = self.objects.get_range(key, 0, len(header))
                if found is not None:
                    if bytes(found) == header:
                        return Publication(
                            PublishOutcome.PUBLISHED if built else PublishOutcome.ALREADY_PRESENT,
                            url,
                        )
                    if self.encrypted:
                        return Publication(
                            PublishOutcome.NOT_PUBLISHED,
                            url,
                            f"{url} holds another copy of this entry than the encrypted one "
                            f"saved here (a plain one, or one encrypted for other keys); "
                            "publishing never replaces an object: delete it, then push again "
                            "(docs/encryption.md, 'Replace the published copies')",
                        )
                    if forced:
                        return Publication(PublishOutcome.ALREADY_PRESENT, url)
                    why = "".join(f"; {message}" for message in warned)
                    return Publication(
                        PublishOutcome.NOT_PUBLISHED,
                        url,
                        f"{url} holds another build of this entry, and this node built instead "
                        f"of using it{why}",
                    )
            elif self.objects.get_range(key, 0, 1) is not None:
                return Publication(PublishOutcome.ALREADY_PRESENT, url)
            pushed, _size = push_entry(self.objects, path, self.signing)
        except (RemoteUnavailable, OSError, EngineCacheError) as error:
            return Publication(PublishOutcome.NOT_PUBLISHED, url, str(error))
        return Publication(
            PublishOutcome.PUBLISHED if pushed else PublishOutcome.ALREADY_PRESENT, url
        )


def _parser(prog: str) -> Parser:
    made = Parser(
        prog=prog,
        allow_abbrev=False,  # --force is not --force-rebuild
        description="Prepare the engines of a model package's recipes (MODULE:ATTRIBUTE holds an "
        "EngineRecipe, a list or tuple of them, or a dict of them) and, with --push, publish "
        "them to the remote cache. Exit status: 0 success, 1 a recipe failed, 2 invalid usage.",
    )
    made.add_argument("spec", metavar="MODULE:ATTRIBUTE", help="where the recipes are")
    made.add_argument(
        "--targets",
        metavar="SM[,SM...]",
        help="build for these compute capabilities (e.g. sm86,sm89,sm120) instead of the "
        "targets each recipe declares",
    )
    made.add_argument(
        "--push",
        nargs="?",
        const="",
        metavar="URL",
        help=f"publish to the remote cache s3://BUCKET[/PREFIX]; without a value, ${REMOTE}",
    )
    made.add_argument(
        "--force-rebuild", action="store_true", help="build even where a saved engine exists"
    )
    made.add_argument(
        "--manifest",
        metavar="FILE",
        type=Path,
        help="write the deployment manifest of the prepared entries to FILE (docs/deploy.md)",
    )
    made.add_argument(
        "--sign-key",
        metavar="KEY",
        type=Path,
        action="append",
        help="write the manifest signed (a DSSE envelope over an in-toto Statement, as "
        "'tensoracle manifest sign' writes it) with this Ed25519 signing key file; repeat it for "
        "several signatures",
    )
    made.add_argument(
        "--manifest-version",
        metavar="N",
        type=_whole_number,
        help="the signed manifest's version, raised with every release (default: the time in "
        "seconds since 1970)",
    )
    made.add_argument(
        "--expires-in",
        metavar="DAYS",
        type=_days,
        default=365.0,
        help="days until applications refuse the signed manifest (default 365)",
    )
    made.add_argument(
        "--shard",
        metavar="I/N",
        help="prepare only part I (from 0) of N disjoint parts of the recipes, the same split on "
        "every machine; auto/N takes I from JOB_COMPLETION_INDEX or TENSORACLE_SHARD_INDEX. "
        "Join the parts' manifests with 'tensoracle manifest merge'",
    )
    made.add_argument(
        "--encrypt-to",
        metavar="PUB",
        type=Path,
        action="append",
        help="save every engine built encrypted for this X25519 public key (a PEM file, "
        "'openssl pkey -pubout' writes it), sealed as it is written, and publish it so with "
        "--push; repeat it for several recipients (docs/encryption.md)",
    )
    add_format_option(made, TABLE, deprecated_json=True)
    return made


def _whole_number(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 0")
    return int(text)


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not 0 < days <= 36500:  # NaN fails too
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days from 0 to 36500")
    return days


def _targets(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    try:
        checked = BuilderSettings(targets=tuple(part.strip() for part in text.split(","))).targets
    except ValueError as error:
        raise UsageError(f"--targets {text!r}: {error}") from error
    return checked


def _publisher(url: str, encrypted: bool = False) -> Publisher:
    try:
        config = configure(url or None)
    except ValueError as error:
        raise UsageError(f"--push: {error}") from error
    if config is None:
        raise UsageError(f"--push: no remote cache: give s3://BUCKET[/PREFIX] or set {REMOTE}")
    signing = publishing_key(config)
    return Publisher(RemoteObjects(config), signing, encrypted)


def _saved_targets(path: Path) -> list[str] | None:
    """The targets the saved entry's header records, or None when it cannot be read."""
    try:
        header = deploy_manifest.saved_header(path)
        size = path.stat().st_size
        _conditions, references, _offset = _core.decode_engine_header(header, size, str(path))
    except (OSError, EngineCacheError):
        return None
    targets = references.get("targets") if isinstance(references, dict) else None
    return [str(target) for target in targets] if isinstance(targets, list) else None


def _make(
    recipe: EngineRecipe,
    targets: tuple[str, ...] | None,
    publisher: Publisher | None,
    force_rebuild: bool,
    encrypt_to: tuple[Path, ...] = (),
) -> Row:
    started = time.monotonic()
    declared = targets or recipe.declaration.settings.targets
    row = Row(recipe.name, recipe.graph_version, None if declared is None else list(declared))
    try:
        chosen = recipe if targets is None else recipe.with_targets(targets)
        with warnings.catch_warnings(record=True) as caught:
            prepared = chosen.prepare(
                remote="" if publisher is None else publisher.url,
                force_rebuild=force_rebuild,
                encrypt_to=encrypt_to,
            )
        for item in caught:
            warnings.showwarning(item.message, item.category, item.filename, item.lineno)
    except (Exception, SystemExit) as error:  # the recipe's own failure: reported in its row
        traceback.print_exc()
        row.error = (
            f"SystemExit: the recipe called sys.exit({error.code!r}) while it was prepared"
            if isinstance(error, SystemExit)
            else f"{type(error).__name__}: {error}"
        )
        row.seconds = time.monotonic() - started
        return row
    row.outcome = BUILT if prepared.built else REUSED
    row.path = str(prepared.path)
    row.targets = _saved_targets(prepared.path) or row.targets
    if publisher is not None:
        remote_warnings = [item for item in caught if issubclass(item.category, RemoteCacheWarning)]
        warned = [str(item.message) for item in remote_warnings]
        publication = publisher.publish(prepared.path, prepared.built, force_rebuild, warned)
        row.published = _STATES[publication.outcome]
        if not publication.present:
            row.publish_reason = publication.reason or "the remote cache did not say why"
            row.error = f"publishing failed: {row.publish_reason}"
    row.seconds = time.monotonic() - started
    return row


def _write_manifest(
    path: Path,
    spec: str,
    publisher: Publisher | None,
    rows: list[Row],
    prog: str,
    shard: dict[str, Any] | None = None,
    signing: deploy_manifest.Signing | None = None,
) -> bool:
    """Writes the deployment manifest of the rows that prepared an entry (signed with
    ``signing``); False (said on stderr, and nothing written) when it cannot be written or
    signed, an entry cannot be read back, or the remote cache holds another build of an entry
    than the local cache (OtherBuildPublished: the entry's signature would not be over its own
    bytes)."""
    entries = []
    try:
        for row in rows:
            if row.path is None or row.outcome == FAILED:
                continue
            fleet = None
            if publisher is not None and row.published != NO:
                # What the object holds (this build's signature, or one made before): read back,
                # and refused when the object is another build than the saved file.
                key = engine_key(Path(row.path).name)
                fleet = deploy_manifest.fleet_object(
                    publisher.objects, key, row.name, Path(row.path)
                )
            entries.append(
                deploy_manifest.entry(row.name, row.graph_version, Path(row.path), fleet)
            )
        deploy_manifest.write(
            path, spec, None if publisher is None else publisher.url, entries, shard, signing
        )
    except (
        OSError,
        ValueError,
        EngineCacheError,
        RemoteUnavailable,
        deploy_manifest.OtherBuildPublished,
    ) as error:
        print(f"{prog}: --manifest: {error}", file=sys.stderr)
        return False
    what = "manifest" if signing is None else f"signed manifest (version {signing.version})"
    print(f"{prog}: wrote the {what} of {len(entries)} entries to {path}", file=sys.stderr)
    return True


def _load(spec: str, prog: str) -> list[EngineRecipe] | None:
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout: the report
            return load_recipes(spec)
    except RecipeSpecError as error:
        raise UsageError(str(error)) from error
    except Exception as error:  # raised by the package while it was imported
        traceback.print_exc()
        print(f"{prog}: loading {spec} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return None


def _build(args: list[str], prog: str) -> int:
    try:
        options = _parser(prog).parse_args(args)
    except SystemExit as done:  # --help printed: argparse's exit, the command's status
        if done.code is None or isinstance(done.code, int):
            return done.code or EXIT_SUCCESS
        return EXIT_FAILURE
    try:
        output = chosen_format(options, prog)
    except FormatError as error:
        raise UsageError(str(error)) from error
    targets = _targets(options.targets)
    try:
        shard = None if options.shard is None else build_shard.parse_shard(options.shard)
    except build_shard.ShardError as error:
        raise UsageError(str(error)) from error
    signing = None
    if options.sign_key:
        if options.manifest is None:
            raise UsageError("--sign-key signs the manifest: give --manifest FILE too")
        if shard is not None:
            raise UsageError(
                "--sign-key: sign the merged manifest of all parts "
                "('tensoracle manifest merge', then 'tensoracle manifest sign'), not a part"
            )
        for key in options.sign_key:
            try:
                _core.SigningKey.from_pem_file(str(key))  # before anything is built
            except (OSError, ValueError) as error:
                raise UsageError(f"--sign-key {key}: {error}") from error
        signing = deploy_manifest.Signing.of(
            options.sign_key, options.manifest_version, options.expires_in
        )
    if options.manifest is not None:  # before anything is built, not after
        try:
            deploy_manifest.check_writable(options.manifest)
        except OSError as error:
            print(f"{prog}: --manifest: {error}", file=sys.stderr)
            return EXIT_FAILURE
    encrypt_to = tuple(options.encrypt_to or ())
    for key in encrypt_to:  # before anything is built
        try:
            _core.recipient_key_id(str(key))
        except (OSError, ValueError) as error:
            raise UsageError(f"--encrypt-to {key}: {error}") from error
    publisher = None if options.push is None else _publisher(options.push, bool(encrypt_to))
    recipes = _load(options.spec, prog)
    if recipes is None:
        return EXIT_FAILURE
    if not recipes:  # load_recipes refuses an empty collection; never report success for none
        print(f"{prog}: {options.spec} holds no recipe: nothing was built", file=sys.stderr)
        return EXIT_FAILURE
    shard_record = None
    if shard is not None:
        shard_record = build_shard.record(recipes, shard)
        every = len(recipes)
        recipes = [recipes[position] for position in build_shard.positions(recipes, shard)]
        print(
            f"{prog}: shard {shard}: {len(recipes)} of the {every} recipes of {options.spec}",
            file=sys.stderr,
        )
    rows = []
    for recipe in recipes:
        with contextlib.redirect_stdout(sys.stderr):  # stdout: the report
            row = _make(recipe, targets, publisher, options.force_rebuild, encrypt_to)
        status = row.outcome
        if publisher is not None:
            status += ", not published" if row.published == NO else f", published: {row.published}"
        status += f" ({row.error})" if row.error else ""
        print(f"{prog}: {row.name} (graph_version {row.graph_version}): {status}", file=sys.stderr)
        rows.append(row)
    signed = None if publisher is None else publisher.signing is not None
    if options.manifest is not None and not _write_manifest(
        options.manifest, options.spec, publisher, rows, prog, shard_record, signing
    ):
        return EXIT_FAILURE
    report = document(
        options.spec,
        None if publisher is None else publisher.url,
        signed,
        rows,
        None if shard is None else str(shard),
    )
    if output == JSON:
        print_json(report)
    else:
        print(table(report, rows), end="", flush=True)
    return EXIT_SUCCESS if report["succeeded"] else EXIT_FAILURE


def main(args: list[str], prog: str) -> int:
    """Runs the build in a child interpreter whose status counts only when it finished."""
    return run_to_completion(
        ("build",), args, prog, lambda: run(prog, USAGE, lambda: _build(args, prog))
    )
