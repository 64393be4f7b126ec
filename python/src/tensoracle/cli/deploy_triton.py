"""``tensoracle deploy triton --manifest FILE OUT``: a Triton model repository of the manifest's
recipes (``tensoracle.model_repository.repository``), each plan the verified plan of its entry
in the cache folder. Prints what was written and what a Triton server needs to serve it; each
refused recipe is named on stderr with why. Exit status: 0 every recipe written, 1 one was
refused or the manifest could not be read, 2 invalid usage.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from tensoracle import _core
from tensoracle.cache.remote.config import TRUST_POLICY, VERIFY_KEY, manifest_trust
from tensoracle.cli.output_format import TABLE, add_format_option, chosen_format
from tensoracle.cli.remote_cache import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    UsageError,
    cache_directory,
    parser,
    print_report,
    run,
)
from tensoracle.model_repository import layout, repository, server_needs
from tensoracle.terminal_text import terminal_text

USAGE = (
    "tensoracle deploy triton --manifest FILE [--recipe NAME]... [--cache-dir DIR] "
    "[--trust-policy POLICY | --verify-key KEY] [--minimum-version N] [--format json|table] OUT"
)


def _deploy(args: list[str], prog: str) -> int:
    made = parser(
        prog,
        "Write a Triton model repository into OUT from a deployment manifest: for each recipe, "
        "OUT/RECIPE/config.pbtxt (platform tensorrt_plan) and the verified TensorRT plan of each "
        "of its entries in OUT/RECIPE/1/, read from the cache folder and checked against the "
        "manifest. A recipe Triton cannot serve (a TensorRT-RTX entry, say) or whose entry is "
        "not the manifest's is refused whole. Exit status: 0 success, 1 a recipe was refused or "
        "the manifest refused, 2 invalid usage.",
    )
    made.add_argument("out", metavar="OUT", help="the model repository folder (made if missing)")
    made.add_argument(
        "--manifest",
        metavar="FILE",
        required=True,
        help="the deployment manifest (build --manifest)",
    )
    made.add_argument(
        "--recipe",
        metavar="NAME",
        action="append",
        default=[],
        help="write this recipe only (again for more); default: every recipe of the manifest",
    )
    trust = made.add_mutually_exclusive_group()
    trust.add_argument(
        "--trust-policy",
        metavar="POLICY",
        help=f"accept only a signed manifest this trust policy file's keys accept (default: "
        f"${TRUST_POLICY})",
    )
    trust.add_argument(
        "--verify-key",
        metavar="KEY",
        help=f"accept only a signed manifest this Ed25519 public key (PEM file) signed "
        f"(default: ${VERIFY_KEY})",
    )
    made.add_argument(
        "--minimum-version",
        metavar="N",
        type=int,
        default=0,
        help="refuse a signed manifest of a lower version",
    )
    add_format_option(made, TABLE)
    options = made.parse_args(args)
    output = chosen_format(options, prog)
    if not options.manifest:
        raise UsageError("--manifest: the file name must not be empty")
    if not options.out:
        raise UsageError("OUT: the folder name must not be empty")
    if options.minimum_version < 0:
        raise UsageError(f"--minimum-version {options.minimum_version}: expected a number >= 0")
    out = Path(options.out)
    if os.path.lexists(out) and not out.is_dir():
        raise UsageError(f"OUT: {terminal_text(str(out))} is not a folder")
    chosen = manifest_trust(options.trust_policy, options.verify_key)  # as open_deployed's
    trusted = _core.read_trusted_manifest(
        options.manifest,
        str(cache_directory(options.cache_dir)),
        None if chosen.key_file is None else str(chosen.key_file),
        chosen.key_text,
        None if chosen.policy is None else str(chosen.policy),
        options.minimum_version,
    )
    document = trusted.document
    known = layout.recipes_of(document)
    unknown = [name for name in options.recipe if name not in known]
    if unknown:
        print(
            f"{prog}: {options.manifest} has no recipe "
            + ", ".join(repr(name) for name in unknown)
            + "; its recipes are "
            + (", ".join(repr(name) for name in known) or "none"),
            file=sys.stderr,
        )
        return EXIT_FAILURE
    out.mkdir(parents=True, exist_ok=True)
    written: list[repository.Written] = []
    refused: list[dict[str, str]] = []
    for recipe in dict.fromkeys(options.recipe or known):
        try:
            written.append(repository.write_recipe(trusted, document, recipe, out))
        except layout.Refused as refusal:
            print(f"{prog}: refused {terminal_text(str(refusal))}", file=sys.stderr)
            refused.append({"recipe": recipe, "reason": str(refusal)})
    report = {
        "repository": str(out),
        "written": [_written(one) for one in written],
        "refused": refused,
        "needs": server_needs.needs(written),
    }
    print_report(report, output, table)
    return EXIT_FAILURE if refused else EXIT_SUCCESS


def _written(one: repository.Written) -> dict[str, Any]:
    return {
        "recipe": one.recipe,
        "folder": str(one.folder),
        "unchanged": one.unchanged,
        "backend_version": one.backend_version,
        "plans": [
            {
                "file": f"{repository.VERSION}/{served.plan_name}",
                "entry": served.file_name,
                "compute_capabilities": list(served.capabilities),
            }
            for served in one.served
        ],
    }


def table(report: dict[str, Any]) -> str:
    """Each model folder and its plans, what the server needs, how to start it, the counts."""
    lines = []
    for one in report["written"]:
        state = "already there, unchanged" if one["unchanged"] else "written"
        lines.append(f"{terminal_text(one['folder'])}: {state}")
        for plan in one["plans"]:
            where = ", ".join(
                layout.described(capability) for capability in plan["compute_capabilities"]
            )
            lines.append(f"  {terminal_text(plan['file'])} ({where})")
    if report["written"]:
        lines += [f"note: {line}" for line in report["needs"]]
        lines.append(
            f"serve it: tritonserver --model-repository {terminal_text(report['repository'])}"
        )
    lines.append(f"{len(report['written'])} written, {len(report['refused'])} refused")
    return "\n".join(lines) + "\n"


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _deploy(args, prog))
