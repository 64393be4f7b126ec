"""Memory of ``tensoracle cache pull`` against a real S3 server (a throwaway Ceph RADOS Gateway).

A pull streams each object into the store's temporary file as it arrives (the path
``open_engine`` takes on a local miss), so what it holds in memory must not grow with the size an
object announces: anyone who can write to the bucket can put a junk object of tens of GiB there
without any signing key. Measured here, each in a process of its own, as the growth of its peak
resident set size (``ru_maxrss`` from ``wait4``, started from a small launcher) over the same program asked for a key that does
not exist (interpreter, imports, client and one GET answered 404):

- ``cache pull`` of a valid engine of ``--mib`` MiB, and of a junk object of the same size (refused
  from its first bytes);
- baseline 1, a plain download of the same engine to a file: an obstore streamed GET written chunk
  by chunk (1 MiB, as the pull's chunks), then fsync;
- baseline 2, the whole object in memory (obstore's ``bytes()``), which is what a pull that buffers
  the announced size costs.

Goal: the pull's growth under 64 MiB for an engine of 256 MiB (the default), whatever its size,
about that of the plain download. Medians of ``--repeat`` runs. The bound is a promise the docs
make (a pull never holds an object in memory), so a miss is a failure: the script exits 1 when
it is not met, in quick mode too.

    .venv/bin/python bench/remote_pull_memory.py [--mib 256] [--repeat 3] [--quick]

Needs the Debian packages ceph-mon, ceph-osd, radosgw and ceph-common (``make setup`` installs
them; without them the script fails); the server helper is the tests' own
(python/tests/support/s3_server.py, reached through bench/harness).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import harness
import s3_server

GOAL_MIB = 64
MIB = 1 << 20

# The baselines' program: "stream" writes the object to a file chunk by chunk, "memory" holds it
# whole; a missing key is answered 404 and measured as the program's own footprint.
OBSTORE_CHILD = """
import os, sys
import obstore
from tensoracle.cache.remote.config import configure
from tensoracle.cache.remote.objects import RemoteObjects
how, url, key, target = sys.argv[1:5]
objects = RemoteObjects(configure(url))
try:
    result = obstore.get(objects._store, key)
except FileNotFoundError:
    sys.exit(0)
if how == "memory":
    data = result.bytes()
    assert len(data) == int(result.meta["size"])
else:
    with open(target, "wb") as file:
        for piece in result.stream(min_chunk_size=1 << 20):
            file.write(piece)
        file.flush()
        os.fsync(file.fileno())
"""


def tensoracle_command() -> str:
    found = shutil.which("tensoracle", path=str(Path(sys.executable).parent))
    if found is None:
        sys.exit(f"the tensoracle command is not installed beside {sys.executable}")
    return found


# Linux counts the memory a process had when it forked in the peak of the program it then runs:
# measured processes are started from this small launcher (no site, no imports), never from the
# benchmark itself, which holds far more than the programs measured.
LAUNCHER = """
import os, sys
result, command = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    os.execv(command[0], command)
_pid, status, usage = os.wait4(pid, 0)
with open(result, "w") as file:
    file.write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def peak_rss(command: list[str], expect: int, work: Path) -> int:
    """The peak resident set size of ``command``'s process, in bytes (it must exit ``expect``)."""
    output, result = work / "output.txt", work / "peak.txt"
    with output.open("wb") as sink:
        subprocess.run(
            [sys.executable, "-S", "-c", LAUNCHER, str(result), *command],
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=True,
        )
    kib, status = (int(field) for field in result.read_text().split())
    if status != expect:
        sys.exit(
            f"{' '.join(command)} exited {status}, not {expect}:\n"
            f"{output.read_text(errors='replace')[-2000:]}"
        )
    return kib * 1024  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--mib", type=int, default=256, help="size of the objects (MiB)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    arguments = harness.parse(parser, {"mib": 16, "repeat": 1})
    missing = s3_server.missing_programs()
    if missing:  # make setup installs them: their absence is a broken setup, not a skip
        sys.exit(f"the S3 server needs {', '.join(missing)} (make setup installs them)")
    mib = arguments.mib
    # memstore keeps about 2 bytes of memory per byte stored: two objects of --mib MiB.
    server = s3_server.start_server(memory_bytes=(5 * mib + 512) << 20)
    work = Path(tempfile.mkdtemp(prefix="tensoracle-bench-pull-memory-"))
    try:
        os.environ.update(server.environment())
        measure(server, mib, arguments.repeat, work)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def measure(server: s3_server.CephS3, mib: int, repeat: int, work: Path) -> None:
    from tensoracle import _core
    from tensoracle.cache.remote.config import configure
    from tensoracle.cache.remote.objects import RemoteObjects, engine_key

    url = f"s3://{server.bucket}/bench-pull-memory"
    config = configure(url)
    assert config is not None
    objects = RemoteObjects(config)
    conditions = {"name": "bench-pull-memory", "graph_version": "1", "plan_mib": mib}
    identity = _core.make_identity(conditions)
    path = Path(
        _core.Store(str(work / "source")).save(identity, {}, os.urandom(mib * MIB))
    )
    engine_bytes = path.stat().st_size
    name = identity.file_name
    assert objects.create(engine_key(name), path.read_bytes())
    path.unlink()
    assert objects.create(engine_key("junk-0.engine"), bytes(mib * MIB))

    command = tensoracle_command()

    def pull(entry: str) -> list[str]:
        target = work / "target"
        shutil.rmtree(target, ignore_errors=True)
        return [
            command,
            "cache",
            "pull",
            entry,
            "--cache-dir",
            str(target),
            "--remote",
            url,
        ]

    def child(how: str, key: str) -> list[str]:
        target = work / "plain-download"
        target.unlink(missing_ok=True)
        return [sys.executable, "-c", OBSTORE_CHILD, how, url, key, str(target)]

    runs: dict[str, list[int]] = {}
    plans = {
        "pull, missing entry": (lambda: pull("missing-0.engine"), 1),
        "pull": (lambda: pull(name), 0),
        "pull of junk": (lambda: pull("junk-0.engine"), 1),
        "plain, missing key": (
            lambda: child("stream", engine_key("missing-0.engine")),
            0,
        ),
        "plain download to a file": (lambda: child("stream", engine_key(name)), 0),
        "in memory, missing key": (
            lambda: child("memory", engine_key("missing-0.engine")),
            0,
        ),
        "whole object in memory": (lambda: child("memory", engine_key(name)), 0),
    }
    for _ in range(
        repeat
    ):  # alternating, so that a change in the machine's state hits all
        for label, (make, expect) in plans.items():
            runs.setdefault(label, []).append(peak_rss(make(), expect, work))
    peak = {label: statistics.median(values) for label, values in runs.items()}
    growth = {
        "pull": peak["pull"] - peak["pull, missing entry"],
        "pull of junk": peak["pull of junk"] - peak["pull, missing entry"],
        "plain download to a file": peak["plain download to a file"]
        - peak["plain, missing key"],
        "whole object in memory": peak["whole object in memory"]
        - peak["in memory, missing key"],
    }
    print(
        f"peak RSS growth, {mib} MiB objects (engine {engine_bytes} bytes), medians of "
        f"{repeat} runs, over the same program asked for a missing key:",
        flush=True,
    )
    for label, grew in growth.items():
        print(
            f"  {label:26s} {grew / MIB:8.1f} MiB  ({grew / engine_bytes:5.2f}x the object; "
            f"peak {peak[label] / MIB:.1f} MiB)"
        )
    plain = max(
        growth["plain download to a file"], MIB
    )  # a ratio against ~0 says nothing
    verdict = "met" if growth["pull"] < GOAL_MIB * MIB else "not met"
    print(
        f"  ratio: pull {growth['pull'] / plain:.2f}x the plain download's growth, "
        f"{growth['pull'] / engine_bytes:.3f}x the object, "
        f"{growth['pull'] / max(growth['whole object in memory'], MIB):.3f}x holding it whole; "
        f"junk {growth['pull of junk'] / plain:.2f}x the plain download's "
        f"(goal: under {GOAL_MIB} MiB: {verdict})"
    )
    if verdict != "met":
        sys.exit(
            f"the pull grew by {growth['pull'] / MIB:.1f} MiB: over the {GOAL_MIB} MiB bound"
        )


if __name__ == "__main__":
    main()
