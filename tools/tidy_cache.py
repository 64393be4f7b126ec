"""clang-tidy over source files, skipping each file whose clean result is already known.

Usage: python tools/tidy_cache.py --build DIR [--cache DIR] [--jobs N] [--extra-arg ARG]... FILE...

clang-tidy reads DIR/compile_commands.json, as `clang-tidy -p DIR` does. A file whose analysis
found nothing is remembered under a key made of everything the analysis reads:

- clang-tidy's version and the `.clang-tidy` files that apply to the file (each folder from the
  file up to the root of its repository);
- the file's compile command and this script's extra arguments, with the repository's and the
  build folder's paths written as placeholders, so that another clone of the same commit finds
  the same keys;
- the content of the file and of every header it includes. The header list is the build's own
  (`ninja -t deps`, what the compiler reported when it last compiled the file); where the build
  has none for the file (a folder configured but not built), the compiler lists them (`-M`).

A later run with the same key skips the file; any change of a byte of the file or of one of its
headers, of the configuration, or of the command analyses it again. Files with findings are never
remembered, so they are analysed and reported on every run. The cache is a folder of empty files
named by key (by default $XDG_CACHE_HOME/tensoracle-dev/clang-tidy, else
~/.cache/tensoracle-dev/clang-tidy), safe to delete at any time and to share between runs at the
same time (each stamp is written whole by a rename).

Exit status: 0 when every file is clean, 1 when one has findings or could not be analysed, 2 for
bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CompileCommand:
    """One entry of compile_commands.json: how one source file is compiled."""

    file: Path
    directory: Path
    arguments: tuple[str, ...]
    output: str | None


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tensoracle-dev" / "clang-tidy"


def read_compile_commands(build: Path) -> dict[Path, CompileCommand]:
    """The build folder's compile commands by the absolute, resolved path of their source file."""
    database = build / "compile_commands.json"
    try:
        entries = json.loads(database.read_text())
    except FileNotFoundError:
        raise SystemExit(
            f"tidy_cache: {database} does not exist: configure {build} first"
        ) from None
    commands: dict[Path, CompileCommand] = {}
    for entry in entries:
        directory = Path(entry["directory"])
        file = (directory / entry["file"]).resolve()
        arguments = entry.get("arguments") or shlex.split(entry["command"])
        commands[file] = CompileCommand(
            file, directory, tuple(arguments), entry.get("output")
        )
    return commands


def build_target(build: Path, output: str) -> str:
    """An object file's name as ninja knows it: relative to the build folder where it lies in it."""
    path = Path(output)
    if path.is_absolute() and path.is_relative_to(build):
        return str(path.relative_to(build))
    return output


def ninja_dependencies(
    build: Path, outputs: Sequence[str], ninja: str | None
) -> dict[str, list[Path]]:
    """What the build's dependency log records for each object file (by its name in
    compile_commands.json): the headers the compiler read when it last built the file. Outputs
    it records nothing for, or only a stale list for (a header changed after the object was
    built), are left out."""
    if not outputs or ninja is None or not (build / ".ninja_deps").exists():
        return {}
    targets = {build_target(build, output): output for output in outputs}
    done = subprocess.run(
        [ninja, "-C", str(build), "-t", "deps", *targets],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return {}
    found: dict[str, list[Path]] = {}
    current: list[Path] | None = None
    for line in done.stdout.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            target, _, rest = line.partition(": #deps")
            current = [] if "(VALID)" in rest else None
            if current is not None and target in targets:
                found[targets[target]] = current
        elif current is not None:
            current.append((build / line.strip()).resolve())
    return found


def compiler_dependencies(command: CompileCommand) -> list[Path] | None:
    """The files the compiler reads for `command`, asked of the compiler itself (-M)."""
    arguments: list[str] = []
    skip_next = False
    for argument in command.arguments:
        if skip_next:
            skip_next = False
        elif argument in ("-o", "-MF", "-MT", "-MQ"):
            skip_next = True
        elif argument in ("-c", "-MD", "-MMD") or argument.startswith("-o"):
            continue
        else:
            arguments.append(argument)
    with tempfile.TemporaryDirectory() as scratch:
        depfile = Path(scratch) / "deps"
        done = subprocess.run(
            [*arguments, "-M", "-MF", str(depfile)],
            cwd=command.directory,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0 or not depfile.exists():
            return None
        text = depfile.read_text()
    return [(command.directory / name).resolve() for name in parse_depfile(text)]


def parse_depfile(text: str) -> list[str]:
    """The prerequisites of a Makefile dependency file as compilers write it: `target: a b \\`
    continued over lines, a space in a name escaped as `\\ `."""
    _, _, rest = text.partition(": ")
    names: list[str] = []
    current = ""
    index = 0
    while index < len(rest):
        char = rest[index]
        if char == "\\" and index + 1 < len(rest) and rest[index + 1] == "\n":
            index += 2
            continue
        if char == "\\" and index + 1 < len(rest) and rest[index + 1] == " ":
            current += " "
            index += 2
            continue
        if char.isspace():
            if current:
                names.append(current)
            current = ""
        else:
            current += char
        index += 1
    if current:
        names.append(current)
    return names


def repository_root(path: Path) -> Path:
    """The nearest folder above `path` holding .git, or the file system's root."""
    for folder in path.parents:
        if (folder / ".git").exists():
            return folder
    return Path(path.anchor)


class Digests:
    """SHA-256 of files, each read once per run."""

    def __init__(self) -> None:
        self._known: dict[Path, str] = {}

    def of(self, path: Path) -> str:
        if path not in self._known:
            try:
                self._known[path] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                self._known[path] = "missing"
        return self._known[path]


def placeholders(text: str, root: Path, build: Path) -> str:
    """`text` with the build folder's and the repository's paths written as placeholders."""
    return text.replace(str(build), "<build>").replace(str(root), "<root>")


def tidy_configs(file: Path, root: Path) -> list[Path]:
    """The .clang-tidy files in the folders from `file`'s up to `root`."""
    configs = []
    for folder in file.parents:
        candidate = folder / ".clang-tidy"
        if candidate.exists():
            configs.append(candidate)
        if folder == root:
            break
    return configs


def cache_key(
    command: CompileCommand,
    dependencies: Iterable[Path],
    *,
    tidy_version: str,
    extra_args: Sequence[str],
    build: Path,
    digests: Digests,
) -> str:
    """The key under which a clean analysis of `command`'s file is remembered."""
    root = repository_root(command.file)
    key = hashlib.sha256()

    def feed(label: str, value: str) -> None:
        key.update(f"{label}\0{value}\0".encode())

    feed("clang-tidy", tidy_version)
    for config in tidy_configs(command.file, root):
        feed("config " + placeholders(str(config), root, build), digests.of(config))
    feed("directory", placeholders(str(command.directory), root, build))
    for argument in command.arguments:
        feed("argument", placeholders(argument, root, build))
    for argument in extra_args:
        feed("extra", placeholders(argument, root, build))
    feed("file", placeholders(str(command.file), root, build))
    for path in sorted(set(dependencies) | {command.file}):
        feed("read " + placeholders(str(path), root, build), digests.of(path))
    return key.hexdigest()


@dataclass
class Outcome:
    file: Path
    cached: bool
    clean: bool
    output: str
    seconds: float = 0.0


def analyse(
    file: Path, key: str | None, build: Path, extra_args: Sequence[str], cache: Path
) -> Outcome:
    if key is not None and (cache / key).exists():
        return Outcome(file, cached=True, clean=True, output="")
    started = time.monotonic()
    done = subprocess.run(
        [
            "clang-tidy",
            "-p",
            str(build),
            "--quiet",
            *(f"--extra-arg={a}" for a in extra_args),
            str(file),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    output = done.stdout + done.stderr
    # clang-tidy also prints "N warnings generated" for headers it was told to ignore.
    clean = done.returncode == 0
    if clean and key is not None:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache, delete=False) as stamp:
            pass
        os.replace(stamp.name, cache / key)
    return Outcome(
        file,
        cached=False,
        clean=clean,
        output=output,
        seconds=time.monotonic() - started,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--build", type=Path, required=True, help="the folder of compile_commands.json"
    )
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--ninja", default=shutil.which("ninja"), help="the build's ninja"
    )
    parser.add_argument("--extra-arg", action="append", default=[], dest="extra_args")
    parser.add_argument(
        "--under",
        action="append",
        default=[],
        type=Path,
        help="also every file of the compile database under this folder",
    )
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    build = args.build.resolve()
    commands = read_compile_commands(build)
    wanted: list[CompileCommand] = []
    for name in args.files:
        path = name.resolve()
        if path not in commands:
            print(
                f"tidy_cache: {name} is not in {build}/compile_commands.json",
                file=sys.stderr,
            )
            return 2
        wanted.append(commands[path])
    for folder in (folder.resolve() for folder in args.under):
        wanted += [
            command
            for path, command in sorted(commands.items())
            if path.is_relative_to(folder)
        ]
    if not wanted:
        print("clang-tidy: no files given")
        return 0
    version = subprocess.run(
        ["clang-tidy", "--version"], capture_output=True, text=True, check=True
    ).stdout
    recorded = ninja_dependencies(
        build, [c.output for c in wanted if c.output], args.ninja
    )
    digests = Digests()

    def key_of(command: CompileCommand) -> str | None:
        dependencies = recorded.get(command.output or "")
        if dependencies is None:
            dependencies = compiler_dependencies(command)
        if dependencies is None:
            return None
        return cache_key(
            command,
            dependencies,
            tidy_version=version,
            extra_args=args.extra_args,
            build=build,
            digests=digests,
        )

    keys = [key_of(command) for command in wanted]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(
            pool.map(
                lambda pair: analyse(
                    pair[0].file, pair[1], build, args.extra_args, args.cache
                ),
                zip(wanted, keys, strict=True),
            )
        )
    failed = [outcome for outcome in outcomes if not outcome.clean]
    for outcome in failed:
        sys.stdout.write(outcome.output)
    cached = sum(outcome.cached for outcome in outcomes)
    print(
        f"clang-tidy: {len(outcomes)} files, {cached} unchanged since a clean analysis, "
        f"{len(outcomes) - cached} analysed, {len(failed)} with findings"
    )
    slowest = sorted((o for o in outcomes if not o.cached), key=lambda o: -o.seconds)[
        :3
    ]
    if slowest:
        print(
            "  slowest: "
            + ", ".join(f"{o.file.name} {o.seconds:.1f} s" for o in slowest)
        )
    for outcome in failed:
        print(f"  findings in {outcome.file}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
