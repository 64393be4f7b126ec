"""The remote engine cache against a real S3 server (a throwaway Ceph RADOS Gateway).

1. Pull: a 256 MiB engine taken from the remote cache the way ``open_engine`` does on a local
   miss (GET, verification of header, plan checksum and conditions, atomic local save), unsigned
   and signed (plus SHA-256 and Ed25519), against a plain obstore GET of the same object into
   memory. Medians of alternating runs; goal <= 1.1x.
2. Fleet: 4 nodes (separate processes, each with its own local cache) started cold at once
   until all hold the engine, with the remote cache (1 build, 3 downloads) against without it
   (4 builds), for a real TensorRT-RTX build of a small MLP.

    .venv/bin/python bench/remote_cache.py [--mib 256] [--repeat 5] [--layers 64]

Needs the Debian packages ceph-mon, ceph-osd, radosgw and ceph-common (``make test`` installs
them); the server helper lives with the tests (python/tests/s3_server.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "tests"))

import s3_server


def pull_benchmark(server: s3_server.CephS3, mib: int, repeat: int, work: Path) -> None:
    import numpy as np
    import obstore
    from tensoracle import _core
    from tensoracle.cache.remote.config import configure
    from tensoracle.cache.remote.fleet import FleetSession
    from tensoracle.cache.remote.objects import RemoteObjects, engine_key

    plan = np.random.default_rng(1).integers(0, 256, mib << 20, dtype=np.uint8)
    conditions = {"name": "bench-pull", "graph_version": "1", "plan_mib": mib}
    identity = _core.make_identity(json.dumps(conditions, sort_keys=True))
    source = _core.Store(str(work / "source"))
    path = source.save(identity, "{}", plan)
    data = Path(path).read_bytes()
    engine_size = len(data)
    signing = work / "signing.pem"
    verify = work / "verify.pem"
    subprocess.run(
        ["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(signing)],
        check=True,
    )
    subprocess.run(
        ["openssl", "pkey", "-in", str(signing), "-pubout", "-out", str(verify)],
        check=True,
    )
    urls = {
        "unsigned": f"s3://{server.bucket}/bench-unsigned",
        "signed": f"s3://{server.bucket}/bench-signed",
    }
    config = configure(urls["unsigned"])
    assert config is not None
    RemoteObjects(config).create(engine_key(identity.file_name), data)
    trailer = _core.signature_trailer(
        _core.SigningKey.from_pem_file(str(signing)), identity.file_name, data
    )
    signed_config = configure(urls["signed"])
    assert signed_config is not None
    RemoteObjects(signed_config).create(engine_key(identity.file_name), data + trailer)
    del data

    plain = RemoteObjects(config)
    key = engine_key(identity.file_name)
    times: dict[str, list[float]] = {"plain GET": [], "pull": [], "pull, signed": []}
    for _ in range(repeat):
        started = time.perf_counter()
        body = obstore.get(plain._store, key).bytes()
        times["plain GET"].append(time.perf_counter() - started)
        assert len(body) == engine_size
        del body
        for label, url, variables in (
            ("pull", urls["unsigned"], {}),
            (
                "pull, signed",
                urls["signed"],
                {"TENSORACLE_REMOTE_VERIFY_KEY": str(verify)},
            ),
        ):
            target = work / "target"
            shutil.rmtree(target, ignore_errors=True)
            os.environ.update(variables)
            store = _core.Store(str(target))
            started = time.perf_counter()
            with FleetSession(url, store, identity) as session:
                fetched = session.fetch()
            times[label].append(time.perf_counter() - started)
            for name in variables:
                del os.environ[name]
            assert fetched is not None and fetched.path.stat().st_size == engine_size
            del fetched
    baseline = statistics.median(times["plain GET"])
    print(f"pull of a {mib} MiB engine, median of {repeat} (alternating):")
    for label, values in times.items():
        median = statistics.median(values)
        print(
            f"  {label:14s} {median:7.3f} s  {mib / median:7.0f} MiB/s  "
            f"{median / baseline:5.2f}x the plain GET"
        )


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
        print(
            f"  {label:16s} {elapsed:7.2f} s until all 4 hold the engine ({builds} builds)"
        )
    print(
        f"  ratio: {results['remote cache'] / results['each node builds']:.2f}x the time of "
        "every node building"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--layers", type=int, default=64)
    arguments = parser.parse_args()
    missing = s3_server.missing_programs()
    if missing:
        print(f"skipped: the S3 server needs {', '.join(missing)}")
        return
    # memstore keeps about 2 bytes of memory per byte stored: two copies of the engine plus
    # the fleet's engine fit in 4 GiB.
    server = s3_server.start_server(memory_bytes=4 << 30)
    work = Path(tempfile.mkdtemp(prefix="tensoracle-bench-remote-"))
    try:
        os.environ.update(server.environment())
        pull_benchmark(server, arguments.mib, arguments.repeat, work)
        print("4 cold nodes:")
        fleet_benchmark(server, arguments.layers, work)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
