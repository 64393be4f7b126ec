"""The remote engine cache against a real S3 server (a throwaway Ceph RADOS Gateway).

1. Pull: an engine taken from the remote cache the way ``open_engine`` does on a local miss
   (streamed into the store's temporary file while it is judged and hashed, verified, fsync and
   atomic rename), unsigned and signed (SHA-256 and Ed25519 added), against a plain download of
   the same object to a local file: an obstore streamed GET written chunk by chunk, then fsync
   (what ``aws s3 cp`` does, plus the fsync a durable copy needs). Medians of alternating runs,
   for each size of ``--mib``; goals: unsigned <= 1.1x, signed <= 1.2x the plain download. The
   pieces are timed too, the network alone and the local work alone (from memory, before the
   objects are stored, so that the benchmark holds no copy while it downloads), so that a miss
   says where the time goes.
2. Fleet: 4 nodes (separate processes, each with its own local cache) started cold at once
   until all hold the engine, with the remote cache (1 build, 3 downloads) against without it
   (4 builds), for a real TensorRT-RTX build of a small MLP; goal <= 0.35x.

    .venv/bin/python bench/remote_cache.py [--mib 256 2048] [--repeat 7] [--layers 64]
                                           [--no-fleet] [--quick]

Needs the Debian packages ceph-mon, ceph-osd, radosgw and ceph-common (``make setup`` installs
them; without them the script fails); the server helper is the tests' own
(python/tests/support/s3_server.py, reached through bench/harness). The server
keeps what it stores in memory (memstore, about 2 bytes of memory per byte stored): the two
objects of each size are stored one size at a time and removed afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harness
import s3_server

GOALS = {"pull": 1.1, "pull, signed": 1.2}


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


@dataclass
class Runs:
    """One measurement's runs: wall time, this process's CPU time (every thread: obstore's, the
    receiver's, and the kernel's work on their behalf) and the S3 server's CPU time."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)
    machine_cpu: list[float] = field(
        default_factory=list
    )  # every process, ours included

    def median(self) -> float:
        return statistics.median(self.wall)

    def describe(self, mib: int) -> str:
        return (
            f"{self.median():7.3f} s  {mib / self.median():6.0f} MiB/s  "
            f"cpu {statistics.median(self.cpu):.3f} s here, "
            f"{statistics.median(self.server_cpu):.3f} s server, "
            f"{statistics.median(self.machine_cpu):.3f} s machine"
        )


def server_cpu_seconds(server: s3_server.CephS3) -> float:
    """User and system time of the server's daemons so far (from /proc)."""
    ticks = 0
    for process in server.processes:
        with contextlib.suppress(OSError):
            fields = (
                Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            )
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """Busy time of all CPUs so far (from /proc/stat): user, nice, system, irq, softirq, steal."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    busy = sum(int(fields[index]) for index in (0, 1, 2, 5, 6, 7))
    return busy / os.sysconf("SC_CLK_TCK")


def alternating(
    server: s3_server.CephS3, repeat: int, runs: dict[str, Callable[[], None]]
) -> dict[str, Runs]:
    """Every run of ``runs`` in turn, ``repeat`` rounds, so that load from elsewhere falls on
    all of them alike."""
    results = {name: Runs() for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            served, busy = server_cpu_seconds(server), machine_cpu_seconds()
            cpu, started = time.process_time(), time.perf_counter()
            run()
            result = results[name]
            result.wall.append(time.perf_counter() - started)
            result.cpu.append(time.process_time() - cpu)
            result.server_cpu.append(server_cpu_seconds(server) - served)
            result.machine_cpu.append(machine_cpu_seconds() - busy)
    return results


def make_keys(work: Path) -> tuple[Path, Path]:
    signing, verify = work / "signing.pem", work / "verify.pem"
    if not signing.exists():
        subprocess.run(
            ["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(signing)],
            check=True,
        )
        subprocess.run(
            ["openssl", "pkey", "-in", str(signing), "-pubout", "-out", str(verify)],
            check=True,
        )
    return signing, verify


def pull_benchmark(server: s3_server.CephS3, mib: int, repeat: int, work: Path) -> None:
    import numpy as np
    import obstore
    from tensoracle import _core
    from tensoracle.cache.remote import objects as remote_objects
    from tensoracle.cache.remote.config import configure
    from tensoracle.cache.remote.fleet import FleetSession
    from tensoracle.cache.remote.objects import RemoteObjects, engine_key

    chunk = remote_objects._STREAM_CHUNK_BYTES
    plan = np.random.default_rng(1).integers(0, 256, mib << 20, dtype=np.uint8)
    conditions = {"name": "bench-pull", "graph_version": "1", "plan_mib": mib}
    identity = _core.make_identity(conditions)
    source = _core.Store(str(work / "source"))
    path = Path(source.save(identity, {}, plan))
    del plan
    data = path.read_bytes()
    path.unlink()
    engine_size = len(data)
    signing, verify = make_keys(work)
    trailer = _core.signature_trailer(
        _core.SigningKey.from_pem_file(str(signing)), identity.file_name, data
    )
    signed_data = data + trailer
    target = work / "target"
    plain_file = work / "plain-download"

    def fresh_store() -> Any:
        shutil.rmtree(target, ignore_errors=True)
        return _core.Store(str(target))

    # The local work alone, from memory, before the server holds anything.
    def write_fsync(source_bytes: bytes) -> Callable[[], None]:
        def run() -> None:
            view = memoryview(source_bytes)
            plain_file.unlink(missing_ok=True)
            with plain_file.open("wb") as file:
                for start in range(0, len(source_bytes), chunk):
                    file.write(view[start : start + chunk])
                file.flush()
                os.fsync(file.fileno())

        return run

    def receive_from_memory(source_bytes: bytes, trusted: Any) -> Callable[[], None]:
        def run() -> None:
            view = memoryview(source_bytes)
            store = fresh_store()
            receiver = _core.RemoteReceiver(
                store, "bench", identity.file_name, len(source_bytes), identity, trusted
            )
            for start in range(0, len(source_bytes), chunk):
                receiver.feed(view[start : start + chunk])
            receiver.finish()

        return run

    verify_key = _core.VerifyKey.from_pem_file(str(verify))
    local = alternating(
        server,
        repeat,
        {
            "write + fsync from memory": write_fsync(data),
            "receiver from memory": receive_from_memory(data, None),
            "receiver from memory, signed": receive_from_memory(
                signed_data, verify_key
            ),
        },
    )

    urls = {
        "unsigned": f"s3://{server.bucket}/bench-unsigned",
        "signed": f"s3://{server.bucket}/bench-signed",
    }
    key = engine_key(identity.file_name)
    config = configure(urls["unsigned"])
    signed_config = configure(urls["signed"])
    assert config is not None and signed_config is not None
    plain = RemoteObjects(config)
    signed_objects = RemoteObjects(signed_config)
    plain.create(key, data)
    signed_objects.create(key, signed_data)
    del data, signed_data  # a node holds no copy in memory: neither does the benchmark

    def download_to_file() -> None:
        # A client of its own, as the pull makes one (and as a separate download command would).
        plain_file.unlink(missing_ok=True)
        result = obstore.get(RemoteObjects(config)._store, key)
        with plain_file.open("wb") as file:
            for piece in result.stream(min_chunk_size=chunk):
                file.write(piece)
            file.flush()
            os.fsync(file.fileno())
        assert plain_file.stat().st_size == engine_size

    def pull(url: str, verify_key: Path | None) -> Callable[[], None]:
        def run() -> None:
            store = fresh_store()
            if verify_key is not None:
                os.environ["TENSORACLE_REMOTE_VERIFY_KEY"] = str(verify_key)
            try:
                with FleetSession(url, store, identity) as session:
                    fetched = session.fetch()
            finally:
                os.environ.pop("TENSORACLE_REMOTE_VERIFY_KEY", None)
            assert fetched is not None and fetched.path.stat().st_size == engine_size

        return run

    def get_only() -> None:
        result = obstore.get(RemoteObjects(config)._store, key)
        arrived = sum(len(piece) for piece in result.stream(min_chunk_size=chunk))
        assert arrived == engine_size

    print(
        f"pull of a {mib} MiB engine ({engine_size} bytes), medians of {repeat} alternating "
        f"runs, {chunk >> 20} MiB chunks; load average {load()}:",
        flush=True,
    )
    times = alternating(
        server,
        repeat,
        {
            "download to a file + fsync": download_to_file,
            "pull": pull(urls["unsigned"], None),
            "pull, signed": pull(urls["signed"], verify),
            "GET alone, chunks dropped": get_only,
        },
    )
    network_piece = times.pop("GET alone, chunks dropped")
    baseline = times["download to a file + fsync"].median()
    for label, runs in times.items():
        line = f"  {label:28s} {runs.describe(mib)}"
        if label in GOALS:
            ratio = runs.median() / baseline
            verdict = "met" if ratio <= GOALS[label] else "not met"
            line += f"; {ratio:4.2f}x the download (goal <= {GOALS[label]}x: {verdict})"
        print(line, flush=True)
    print(f"  pieces (medians of alternating runs; load average {load()}):")
    print(f"    {'GET alone, chunks dropped':30s} {network_piece.describe(mib)}")
    for label, runs in local.items():
        print(f"    {label:30s} {runs.describe(mib)}", flush=True)
    plain_file.unlink(missing_ok=True)
    shutil.rmtree(target, ignore_errors=True)
    for objects in (plain, signed_objects):
        objects.delete(key)


NODE = """
import json, os, sys, time
import numpy as np
import tensoracle
from tensoracle import BuilderSettings, EngineBuild, EngineIO, InputShape, TensorSpec
layers, width = int(sys.argv[1]), int(sys.argv[2])
trt = tensoracle.backend().module
def graph(network):
    tensor = network.add_input("x", trt.float32, (1, width))
    rng = np.random.default_rng(3)
    for index in range(layers):
        weights = network.add_constant((width, width), rng.standard_normal(
            (width, width), dtype=np.float32)).get_output(0)
        tensor = network.add_matrix_multiply(tensor, trt.MatrixOperation.NONE, weights,
                                             trt.MatrixOperation.NONE).get_output(0)
        tensor = network.add_activation(tensor, trt.ActivationType.RELU).get_output(0)
    tensor.name = "y"
    network.mark_output(tensor)
declaration = EngineBuild(inputs={"x": InputShape.fixed((1, width))},
                          settings=BuilderSettings(workspace_limit=None, optimization_level=3))
io = EngineIO(inputs={"x": TensorSpec(trt.float32, (1, width))},
              outputs={"y": TensorSpec(trt.float32, (1, width))})
started = time.monotonic()
prepared = tensoracle.prepare_engine(graph, declaration, name="bench-fleet", graph_version="1",
                                     weights=[sys.argv[3]], io=io)
print(json.dumps({"built": prepared.built, "seconds": time.monotonic() - started}))
"""


def fleet_benchmark(server: s3_server.CephS3, layers: int, work: Path) -> None:
    import numpy as np
    from safetensors.numpy import save_file

    weights = work / "fleet.safetensors"
    save_file({"unused": np.zeros(1, dtype=np.float32)}, str(weights))
    width = 1024
    results = {}
    for label, remote in (
        ("each node builds", ""),
        ("remote cache", f"s3://{server.bucket}/bench-fleet"),
    ):
        environment_base = {
            **os.environ,
            **server.environment(),
            "TENSORACLE_REMOTE": remote,
        }
        started = time.perf_counter()
        nodes = []
        for index in range(4):
            environment = {
                **environment_base,
                "XDG_CACHE_HOME": str(work / f"{label}-{index}".replace(" ", "-")),
            }
            nodes.append(
                subprocess.Popen(
                    [sys.executable, "-c", NODE, str(layers), str(width), str(weights)],
                    env=environment,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        outputs = [json.loads(node.communicate(timeout=1800)[0]) for node in nodes]
        elapsed = time.perf_counter() - started
        results[label] = elapsed
        builds = sum(output["built"] for output in outputs)
        nodes_seconds = ", ".join(
            f"{output['seconds']:.1f} s {'built' if output['built'] else 'downloaded'}"
            for output in sorted(outputs, key=lambda output: output["seconds"])
        )
        print(
            f"  {label:16s} {elapsed:7.2f} s until all 4 hold the engine ({builds} builds; "
            f"prepare_engine per node: {nodes_seconds})"
        )
    ratio = results["remote cache"] / results["each node builds"]
    verdict = "met" if ratio <= 0.35 else "not met"
    print(
        f"  ratio: {ratio:.2f}x the time of every node building (goal <= 0.35x: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[256, 2048])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--layers", type=int, default=64)
    parser.add_argument(
        "--no-fleet", action="store_true", help="measure the pulls only"
    )
    arguments = harness.parse(parser, {"mib": [4], "repeat": 1, "layers": 2})
    missing = s3_server.missing_programs()
    if missing:  # make setup installs them: their absence is a broken setup, not a skip
        sys.exit(f"the S3 server needs {', '.join(missing)} (make setup installs them)")
    # memstore's device size bounds what it stores: the two objects of the largest size (one
    # size at a time, removed afterwards) and the fleet's engine, with room to spare.
    server = s3_server.start_server(memory_bytes=(4 * max(arguments.mib) + 1024) << 20)
    work = Path(tempfile.mkdtemp(prefix="tensoracle-bench-remote-"))
    try:
        os.environ.update(server.environment())
        for mib in arguments.mib:
            pull_benchmark(server, mib, arguments.repeat, work)
        if not arguments.no_fleet:
            print(f"4 cold nodes (load average {load()}):", flush=True)
            fleet_benchmark(server, arguments.layers, work)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
