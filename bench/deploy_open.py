"""Benchmark: opening a deployed engine (tensoracle::deploy) vs reading and hashing its file once.

Open = what a C++ application does before TensorRT sees a byte (through the bindings, which call
the same library): select the entry, map the file, check it against the manifest, compute the
plan's XXH3-128 and, with a verify key, the SHA-256 of every byte for the Ed25519 signature.
Baselines, measured in the same run on the same warm file: reading it once in 1 MiB pieces into
one buffer while hashing it with XXH3-128 (xxhash), and with SHA-256 (hashlib) for the signed
case. Goals: each open at most 1.1x its baseline. Also selection among 10,000 manifest entries
(one recipe, every entry for another GPU but one): goal under 1 ms per selection, timed over a
manifest already read. Rounds are interleaved and the best of each is kept. The open copies the
file into the process's own memory while it hashes it (what is verified is what TensorRT gets),
so it also reports the peak extra host memory of one open of a --memory-gib plan (default 4),
measured in a fresh process (VmHWM less VmRSS before the open), beside the same figure for the
baseline's read + hash. Streamed (stream_plan): the open reads and checks the header only, and the
plan is handed over as a C++ IStreamReaderV2 consumer asks for it (read_plan_into: PlanReader::read,
what tensorrt::VerifiedPlanStream calls), into one buffer of the consumer's reused for every read:
in reads of 1 MiB (inside a chunk: each 4 MiB chunk is read into the reader's buffer, checked,
then copied out), of 4 MiB (one chunk each, read into the consumer's buffer and checked there)
and of 64 MiB (sixteen chunks each, likewise).
Checked with XXH3-128 (the header first bound to the manifest's header_sha256), or SHA-256 with a
verify key (the manifest signed, its entry bound to the file's digests). Goals: open + hand-over
of the whole plan at most 1.2x read + XXH3-128 without a key, 1.1x read + SHA-256 with one, and a
peak extra memory <= 64 MiB. Also reading a signed manifest of --entries entries verified with
the key, against the same manifest plain without one.
Run: .venv/bin/python bench/deploy_open.py [--gib N] [--memory-gib N] [--repeats N]
     [--entries N] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
import xxhash
from tensoracle import _core

BACKEND, VERSION = "tensorrt_rtx", "1.7.1.116"
DEVICE = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
PIECE = 1 << 20
LATER = "2099-01-01T00:00:00Z"


def conditions(name: str, targets: list[str]) -> dict[str, object]:
    return {
        "name": name,
        "graph_version": "1",
        "backend": BACKEND,
        "backend_version": VERSION,
        "gpu": None,
        "targets": targets,
    }


def manifest_entry(
    path: Path, recorded: dict[str, object], signature: str | None
) -> dict:
    data = path.read_bytes()
    _conditions, _references, offset = _core.decode_engine_header(
        data[: _core.engine_prefix_bytes(data[:20])], len(data), str(path)
    )
    plan = memoryview(data)[offset:]
    return {
        "recipe": "bench",
        "graph_version": "1",
        "file_name": path.name,
        "conditions": recorded,
        "backend": BACKEND,
        "backend_version": VERSION,
        "targets": recorded["targets"],
        "hardware_compatibility": None,
        "io": None,
        "plan": {"size": len(plan), "xxh3_128": xxhash.xxh3_128(plan).hexdigest()},
        "engine_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "header_sha256": hashlib.sha256(data[:offset]).hexdigest(),
        "fleet": None
        if signature is None
        else {"key": "engines/" + path.name, "url": "s3://b/engines/" + path.name,
              "signed": True, "signature": signature},
    }  # fmt: skip


def write_manifest(path: Path, entries: list[dict]) -> None:
    document = {
        "schema_version": 1,
        "spec": "bench:RECIPES",
        "remote": None,
        "entries": entries,
    }
    path.write_text(json.dumps(document))


def read_and_hash(path: Path, digest: object) -> None:
    buffer = bytearray(PIECE)
    view = memoryview(buffer)
    with path.open("rb", buffering=0) as file:
        while count := file.readinto(buffer):
            digest.update(view[:count])  # type: ignore[attr-defined]


# Run in a fresh process: the growth of its peak resident memory over one open (or one read +
# hash of the same file, the baseline), in bytes.
PEAK_CHILD = r"""
import json
import sys
import xxhash
from tensoracle import _core

def status(field):
    with open("/proc/self/status") as lines:
        for line in lines:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)

how, manifest, cache, device_text, backend, version, path = sys.argv[1:]
device = json.loads(device_text)
before = status("VmRSS")
if how == "open":
    opened = _core.open_deployed(manifest, "bench", device, backend, version, cache, None)
    assert len(opened.plan) > 0
elif how == "streamed":
    opened = _core.open_deployed(
        manifest, "bench", device, backend, version, cache, None, None, False, True
    )
    assert opened.streamed
    buffer = bytearray(1 << 20)
    offset = 0
    while count := opened.read_plan_into(offset, buffer):
        offset += count
    assert offset == opened.plan_size
else:
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    digest = xxhash.xxh3_128()
    with open(path, "rb", buffering=0) as file:
        while count := file.readinto(buffer):
            digest.update(view[:count])
print(status("VmHWM") - before)
"""


def peak_growth(how: str, manifest: Path, cache: Path, path: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PEAK_CHILD, how, str(manifest), str(cache), json.dumps(DEVICE),
         BACKEND, VERSION, str(path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout.strip())


def memory_figures(directory: Path, size: int) -> tuple[int, int, int]:
    """Peak extra resident bytes of an open of a `size`-byte plan (whole, then streamed and
    handed over), and of the baseline."""
    cache = directory / "memory-cache"
    store = _core.Store(str(cache))
    recorded = conditions("bench", ["sm86", "sm89"])
    identity = _core.make_identity(recorded)
    path = Path(store.save(identity, {}, np.full(size, 7, dtype=np.uint8)))
    manifest = directory / "memory.json"
    entry = manifest_entry(path, recorded, None)
    write_manifest(manifest, [entry])
    read_and_hash(path, xxhash.xxh3_128())  # warm the page cache
    try:
        return (
            peak_growth("open", manifest, cache, path),
            peak_growth("streamed", manifest, cache, path),
            peak_growth("read", manifest, cache, path),
        )
    finally:
        path.unlink()


def selection_seconds(directory: Path, count: int) -> float:
    """Seconds per selection among `count` entries of one recipe, one of which runs on sm89."""
    entries = []
    for index in range(count):
        # Every entry its own identity (another graph version), all but one for another GPU.
        recorded = conditions("bench", ["sm89"] if index == count // 2 else ["sm120"])
        recorded["graph_version"] = str(index)
        identity = _core.make_identity(recorded)
        entries.append(
            {
                "recipe": "bench",
                "graph_version": str(index),
                "file_name": identity.file_name,
                "conditions": recorded,
                "backend": BACKEND,
                "backend_version": VERSION,
                "targets": recorded["targets"],
                "hardware_compatibility": None,
                "io": None,
                "plan": {"size": 1, "xxh3_128": "0" * 32},
                "engine_bytes": 100,
                "fleet": None,
            }
        )
    path = directory / "many.json"
    write_manifest(path, entries)
    manifest = _core.DeployManifest.read(str(path))
    assert manifest.size == count
    chosen = manifest.select("bench", DEVICE, BACKEND, VERSION)
    assert chosen == entries[count // 2]["file_name"]
    rounds = 20
    started = time.perf_counter()
    for _ in range(rounds):
        manifest.select("bench", DEVICE, BACKEND, VERSION)
    return (time.perf_counter() - started) / rounds


def signed_manifest_seconds(
    directory: Path, count: int, signing: Path, verify: Path
) -> tuple[float, float]:
    """Seconds to read a manifest of `count` entries as an application reads it (the reader
    open_deployed uses): signed and verified with the key (the envelope's signature over
    DSSE's encoding, the Statement, each entry bound to its subject, the cache folder's record of
    versions), and the same manifest plain, read without a key (the baseline)."""
    entries = []
    for index in range(count):
        recorded = conditions("bench", ["sm89"])
        recorded["graph_version"] = str(index)
        identity = _core.make_identity(recorded)
        digest = hashlib.sha256(identity.file_name.encode()).hexdigest()
        entries.append({
            "recipe": "bench", "graph_version": str(index), "file_name": identity.file_name,
            "conditions": recorded, "backend": BACKEND, "backend_version": VERSION,
            "targets": recorded["targets"], "hardware_compatibility": None, "io": None,
            "plan": {"size": 1, "xxh3_128": "0" * 32}, "engine_bytes": 100,
            "sha256": digest, "header_sha256": digest, "fleet": None,
        })  # fmt: skip
    plain = directory / "many-plain.json"
    write_manifest(plain, entries)
    signed = directory / "many-signed.json"
    signed.write_text(
        _core.sign_manifest(plain.read_text(), "many.json", 1, LATER, [str(signing)])
    )
    cache = directory / "many-cache"
    best = harness.interleaved_best(
        3,
        {
            "signed": lambda: (
                _core.read_trusted_manifest(
                    str(signed), str(cache), str(verify)
                ).document
            ),
            "plain": lambda: (
                _core.read_trusted_manifest(str(plain), str(cache)).document
            ),
        },
    )
    return best["signed"], best["plain"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gib", type=float, default=1.0, help="plan size in GiB (default 1)"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="best of N rounds (default 5)"
    )
    parser.add_argument(
        "--entries", type=int, default=10_000, help="manifest entries to select among"
    )
    parser.add_argument(
        "--memory-gib", type=float, default=4.0,
        help="plan size in GiB for the peak memory figure (default 4)",
    )  # fmt: skip
    args = harness.parse(
        parser, {"gib": 1 / 64, "memory_gib": 1 / 64, "repeats": 1, "entries": 1000}
    )
    size = int(args.gib * (1 << 30)) // 8 * 8

    directory = Path(tempfile.mkdtemp(prefix="tensoracle-bench-"))
    try:
        cache = directory / "cache"
        store = _core.Store(str(cache))
        recorded = conditions("bench", ["sm86", "sm89"])
        identity = _core.make_identity(recorded)
        plan = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8)
        path = Path(store.save(identity, {}, plan))
        del plan
        signing, verify = directory / "signing.pem", directory / "verify.pem"
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(signing)],
                       check=True)  # fmt: skip
        subprocess.run(["openssl", "pkey", "-in", str(signing), "-pubout", "-out", str(verify)],
                       check=True)  # fmt: skip
        key = _core.SigningKey.from_pem_file(str(signing))
        data = path.read_bytes()
        trailer = _core.signature_trailer(key, path.name, data)
        signature = bytes(trailer[: _core.SIGNATURE_TRAILER_BYTES - 8]).hex()
        del data
        unsigned_manifest, signed_manifest = (
            directory / "unsigned.json",
            directory / "signed.json",
        )
        write_manifest(unsigned_manifest, [manifest_entry(path, recorded, None)])
        write_manifest(signed_manifest, [manifest_entry(path, recorded, signature)])
        # A key opens only a signed manifest (tensoracle manifest sign), whose entry then opens
        # only as the file it names.
        signed_manifest.write_text(
            _core.sign_manifest(signed_manifest.read_text(), "signed.json", 1, LATER,
                                [str(signing)])
        )  # fmt: skip
        read_and_hash(path, xxhash.xxh3_128())  # warm the page cache

        def open_unsigned() -> None:
            opened = _core.open_deployed(
                str(unsigned_manifest),
                "bench",
                DEVICE,
                BACKEND,
                VERSION,
                str(cache),
                None,
            )
            assert opened.signer is None

        reads = {
            "1mib": bytearray(PIECE),
            "4mib": bytearray(4 * PIECE),
            "64mib": bytearray(64 * PIECE),
        }

        def hand_over(opened: _core.DeployedEngine, buffer: bytearray) -> None:
            assert opened.streamed
            offset = 0
            while count := opened.read_plan_into(offset, buffer):
                offset += count
            assert offset == opened.plan_size

        def streamed(manifest: Path, key: str | None, read: str) -> None:
            hand_over(
                _core.open_deployed(
                    str(manifest), "bench", DEVICE, BACKEND, VERSION, str(cache), key,
                    None, False, True,
                ),
                reads[read],
            )  # fmt: skip

        def open_signed() -> None:
            opened = _core.open_deployed(
                str(signed_manifest),
                "bench",
                DEVICE,
                BACKEND,
                VERSION,
                str(cache),
                str(verify),
            )
            assert opened.signer is not None

        load_before = os.getloadavg()
        best = harness.interleaved_best(
            args.repeats,
            {
                "open": open_unsigned,
                "read_xxh3": lambda: read_and_hash(path, xxhash.xxh3_128()),
                "open_signed": open_signed,
                "read_sha256": lambda: read_and_hash(path, hashlib.sha256()),
                "streamed_1mib": lambda: streamed(unsigned_manifest, None, "1mib"),
                "streamed_4mib": lambda: streamed(unsigned_manifest, None, "4mib"),
                "streamed_64mib": lambda: streamed(unsigned_manifest, None, "64mib"),
                "streamed_signed_1mib": lambda: streamed(
                    signed_manifest, str(verify), "1mib"
                ),
                "streamed_signed_4mib": lambda: streamed(
                    signed_manifest, str(verify), "4mib"
                ),
                "streamed_signed_64mib": lambda: streamed(
                    signed_manifest, str(verify), "64mib"
                ),
            },
        )
        load_after = os.getloadavg()
        per_selection = selection_seconds(directory, args.entries)
        signed_read, plain_read = signed_manifest_seconds(
            directory, args.entries, signing, verify
        )
        memory_size = int(args.memory_gib * (1 << 30)) // 8 * 8
        open_peak, streamed_peak, read_peak = memory_figures(directory, memory_size)
        gib = size / (1 << 30)

        def line(label: str, key: str) -> str:
            return f"{label:<52} {best[key]:.3f} s ({gib / best[key]:.2f} GiB/s)"

        print(f"engine: {gib:.2f} GiB plan, best of {args.repeats} interleaved rounds")
        before = " ".join(f"{value:.2f}" for value in load_before)
        after = " ".join(f"{value:.2f}" for value in load_after)
        print(
            f"load average (1/5/15 min): {before} before, {after} after, {os.cpu_count()} CPUs"
        )
        print(line("open: select + copy + verify (ours):", "open"))
        print(line("read once + XXH3-128 (baseline):", "read_xxh3"))
        print(
            line("open with a verify key: + SHA-256 + Ed25519 (ours):", "open_signed")
        )
        print(line("read once + SHA-256 (baseline):", "read_sha256"))
        print(f"ratio (open / read + XXH3-128): {best['open'] / best['read_xxh3']:.2f}x "
              "(goal <= 1.1x)")  # fmt: skip
        print(f"ratio (signed open / read + SHA-256): "
              f"{best['open_signed'] / best['read_sha256']:.2f}x (goal <= 1.1x)")  # fmt: skip
        for read, label in (("1mib", "1 MiB"), ("4mib", "4 MiB"), ("64mib", "64 MiB")):
            print(
                line(
                    f"streamed open + hand-over in {label} reads (ours):",
                    f"streamed_{read}",
                )
            )
            print(
                line("  the same with a verify key (ours):", f"streamed_signed_{read}")
            )
            print(f"  ratios: {best[f'streamed_{read}'] / best['read_xxh3']:.2f}x read + "
                  f"XXH3-128 (goal <= 1.2x), "
                  f"{best[f'streamed_signed_{read}'] / best['read_sha256']:.2f}x "
                  "read + SHA-256 with the key (goal <= 1.1x)")  # fmt: skip
        print(f"selection among {args.entries} entries: {per_selection * 1e3:.3f} ms "
              "(goal < 1 ms)")  # fmt: skip
        print(f"reading a signed manifest of {args.entries} entries, verified with the key "
              f"(ours): {signed_read * 1e3:.1f} ms; the same manifest plain, without a key "
              f"(baseline): {plain_read * 1e3:.1f} ms; ratio "
              f"{signed_read / plain_read:.2f}x")  # fmt: skip
        mib = 1 << 20
        print(f"peak extra host memory, open of a {memory_size / (1 << 30):.2f} GiB plan "
              f"(private copy, ours): {open_peak / mib:.1f} MiB; read once + XXH3-128 "
              f"(baseline): {read_peak / mib:.1f} MiB; ratio to the plan's size "
              f"{open_peak / memory_size:.2f}")  # fmt: skip
        print(f"peak extra host memory, streamed open + hand-over of the same plan (ours): "
              f"{streamed_peak / mib:.1f} MiB (goal <= 64 MiB)")  # fmt: skip
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
