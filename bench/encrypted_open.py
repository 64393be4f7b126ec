"""Benchmark: a streamed, decrypted open of an encrypted engine vs reading and hashing its file once.

The entry is saved, then sealed with `tensoracle cache encrypt ENTRY --to PUB` for a key made by
`openssl genpkey -algorithm x25519`, and listed in a deployment manifest as `tensoracle deploy
manifest` lists it (its stored body: the sealed chunks). Timed on the same warm file, in rounds
interleaved, the best of each kept:

- ours: `open_deployed(..., stream_plan=True, decrypt_key=KEY)` (the key's copy of the data key
  unwrapped, the header bound to the manifest), then the whole plan handed over by `read_plan_into`
  (PlanReader::read, what TensorRT's IStreamReaderV2 calls) into one reused buffer, in reads of
  1 MiB and of 4 MiB: each 4 MiB chunk read, checked against its digest, authenticated and
  decrypted (AES-256-GCM) before any byte of it is handed on;
- baseline: reading the file once in 4 MiB pieces with SHA-256 (hashlib); goal: ours at most
  1.2x its time;
- baseline: reading the file once in its 4 MiB chunks and opening each one with AES-256-GCM
  (cryptography's AESGCM, the data key unwrapped here from the header with the same key): the
  cipher's own share.

Also, each in a fresh process: the peak resident memory (VmHWM) of a streamed decrypted open and
hand-over of a --memory-gib plan (default 4), less the same on a plan of 1 MiB; goal at most
64 MiB. And the time of `tensoracle cache encrypt ENTRY --key KEY --to NEW.pub` (a recipient
added to an encrypted entry: its data key re-wrapped) for the --rewrap-mib sizes (64 and 1024),
the recipient removed again between rounds, and the ratio of the two: the data key alone changes,
so the goal is a time independent of the plan's size.
Run: .venv/bin/python bench/encrypted_open.py [--gib N] [--memory-gib N] [--rewrap-mib A B]
     [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
import xxhash
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from tensoracle import _core

BACKEND, VERSION = "tensorrt_rtx", "1.7.1.116"
DEVICE = {"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}
CHUNK = 4 << 20
MIB = 1 << 20
LATER = "2099-01-01T00:00:00Z"
PIECE_AAD = b"tensoracle plan chunk v1"
WRAP_INFO = b"tensoracle engine key v1"


def conditions(name: str) -> dict[str, object]:
    return {
        "name": name,
        "graph_version": "1",
        "backend": BACKEND,
        "backend_version": VERSION,
        "gpu": None,
        "targets": ["sm86", "sm89"],
    }


def tensoracle_command() -> str:
    scripts = Path(sys.executable).parent
    found = shutil.which("tensoracle", path=str(scripts)) or shutil.which("tensoracle")
    if found is None:
        sys.exit("the tensoracle command is not installed (make python)")
    return found


def make_key(directory: Path, name: str) -> tuple[Path, Path]:
    private, public = directory / f"{name}.key", directory / f"{name}.pub"
    subprocess.run(["openssl", "genpkey", "-algorithm", "x25519", "-out", str(private)],
                   check=True)  # fmt: skip
    subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)],
                   check=True)  # fmt: skip
    return private, public


def key_id(public: Path) -> str:
    key = serialization.load_pem_public_key(public.read_bytes())
    assert isinstance(key, X25519PublicKey)
    return hashlib.sha256(key.public_bytes_raw()).hexdigest()


def encrypted_entry(
    tensoracle: str,
    cache: Path,
    name: str,
    size: int,
    public: Path,
    fill: int | None = None,
) -> Path:
    """A saved entry of a `size`-byte plan (random bytes, or `fill` repeated), encrypted for
    `public` by `tensoracle cache encrypt`."""
    store = _core.Store(str(cache))
    if fill is None:
        plan = np.frombuffer(np.random.default_rng(0).bytes(size), dtype=np.uint8)
    else:
        plan = np.full(size, fill, dtype=np.uint8)
    path = Path(store.save(_core.make_identity(conditions(name)), {}, plan))
    del plan
    subprocess.run([tensoracle, "cache", "encrypt", path.name, "--to", str(public),
                    "--cache-dir", str(cache)], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return path


def header_of(path: Path) -> tuple[dict, int]:
    """The file's JSON header and the offset of its body."""
    with path.open("rb") as file:
        preamble = file.read(_core.ENGINE_PREAMBLE_BYTES)
        version, length = struct.unpack("<IQ", preamble[8:20])
        assert version == 3, f"{path} is not encrypted (format {version})"
        return json.loads(file.read(length)), len(preamble) + length


def write_manifest(
    path: Path, engine: Path, name: str, signature: str | None = None
) -> None:
    """A deployment manifest of one entry, `engine`, as `tensoracle deploy manifest` writes it
    (with `signature`, the hex of its signature trailer, as published to a fleet)."""
    _, offset = header_of(engine)
    whole, body, head = hashlib.sha256(), xxhash.xxh3_128(), b""
    with engine.open("rb", buffering=0) as file:
        head = file.read(offset)
        whole.update(head)
        while piece := file.read(CHUNK):
            whole.update(piece)
            body.update(piece)
    recorded = conditions(name)
    entry = {
        "recipe": name, "graph_version": "1", "file_name": engine.name, "conditions": recorded,
        "backend": BACKEND, "backend_version": VERSION, "targets": recorded["targets"],
        "hardware_compatibility": None, "io": None,
        "plan": {"size": engine.stat().st_size - offset, "xxh3_128": body.hexdigest()},
        "engine_bytes": engine.stat().st_size, "sha256": whole.hexdigest(),
        "header_sha256": hashlib.sha256(head).hexdigest(),
        "fleet": None if signature is None
        else {"key": "engines/" + engine.name, "url": "s3://b/engines/" + engine.name,
              "signed": True, "signature": signature},
    }  # fmt: skip
    path.write_text(json.dumps({"schema_version": 1, "spec": f"{name}:RECIPES",
                                "remote": None, "entries": [entry]}))  # fmt: skip


def data_key_of(path: Path, private: Path) -> bytes:
    """The entry's data key, unwrapped from its header with `private` as the format says."""
    header, _ = header_of(path)
    key = serialization.load_pem_private_key(private.read_bytes(), None)
    assert isinstance(key, X25519PrivateKey)
    mine = key.public_key().public_bytes_raw()
    (copy,) = [r for r in header["encryption"]["recipients"]
               if r["key"] == hashlib.sha256(mine).hexdigest()]  # fmt: skip
    ephemeral = bytes.fromhex(copy["ephemeral"])
    shared = key.exchange(X25519PublicKey.from_public_bytes(ephemeral))
    kek = HKDF(
        algorithm=SHA256(), length=32, salt=ephemeral + mine, info=WRAP_INFO
    ).derive(shared)
    return AESGCM(kek).decrypt(bytes(12), bytes.fromhex(copy["wrapped_key"]), None)


def read_and_hash(path: Path) -> None:
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    digest = hashlib.sha256()
    with path.open("rb", buffering=0) as file:
        while count := file.readinto(buffer):
            digest.update(view[:count])


def read_and_open(path: Path, offset: int, aead: AESGCM) -> None:
    """Every chunk of the body read and opened, as the format seals it."""
    size = path.stat().st_size - offset
    count = (size + CHUNK - 1) // CHUNK
    with path.open("rb", buffering=0) as file:
        file.seek(offset)
        for index in range(count):
            chunk = file.read(CHUNK)
            aead.decrypt(
                struct.pack(">QB3x", index, index == count - 1), chunk, PIECE_AAD
            )


def signed_manifest(directory: Path, engine: Path, name: str, signing: Path) -> Path:
    """The manifest of `engine` signed (tensoracle manifest sign), its entry bound to the file's
    signature trailer: an open with the verify key checks every chunk's SHA-256."""
    key = _core.SigningKey.from_pem_file(str(signing))
    trailer = _core.signature_trailer(key, engine.name, engine.read_bytes())
    signature = bytes(trailer[: _core.SIGNATURE_TRAILER_BYTES - 8]).hex()
    path = directory / f"{name}-signed.json"
    write_manifest(path, engine, name, signature)
    path.write_text(
        _core.sign_manifest(path.read_text(), path.name, 1, LATER, [str(signing)])
    )
    return path


def streamed(
    manifest: Path,
    name: str,
    cache: Path,
    private: Path,
    buffer: bytearray,
    verify: Path | None = None,
) -> int:
    opened = _core.open_deployed(str(manifest), name, DEVICE, BACKEND, VERSION, str(cache),
                                 None if verify is None else str(verify), stream_plan=True,
                                 decrypt_key=str(private))  # fmt: skip
    assert opened.streamed
    offset = 0
    while count := opened.read_plan_into(offset, buffer):
        offset += count
    assert offset == opened.plan_size
    return offset


# Run in a fresh process: its peak resident memory after a streamed decrypted open and hand-over
# of the whole plan in 1 MiB reads, in bytes.
PEAK_CHILD = r"""
import json
import sys
from tensoracle import _core

manifest, name, cache, device, backend, version, private = sys.argv[1:]
opened = _core.open_deployed(manifest, name, json.loads(device), backend, version, cache, None,
                             stream_plan=True, decrypt_key=private)
buffer = bytearray(1 << 20)
offset = 0
while count := opened.read_plan_into(offset, buffer):
    offset += count
assert offset == opened.plan_size
with open("/proc/self/status") as lines:
    for line in lines:
        if line.startswith("VmHWM:"):
            print(int(line.split()[1]) * 1024)
"""


def peak(manifest: Path, name: str, cache: Path, private: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PEAK_CHILD, str(manifest), name, str(cache), json.dumps(DEVICE),
         BACKEND, VERSION, str(private)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout.strip())


def memory_figure(
    tensoracle: str, directory: Path, size: int, private: Path, public: Path
) -> tuple[int, int]:
    """Peak resident bytes of a streamed decrypted open of a `size`-byte plan, and of a 1 MiB one."""
    cache = directory / "memory-cache"
    peaks = []
    for name, bytes_ in (("big", size), ("tiny", MIB)):
        engine = encrypted_entry(tensoracle, cache, name, bytes_, public, fill=7)
        manifest = directory / f"{name}.json"
        write_manifest(manifest, engine, name)
        try:
            peaks.append(peak(manifest, name, cache, private))
        finally:
            engine.unlink()
    return peaks[0], peaks[1]


def rewrap_seconds(
    tensoracle: str, cache: Path, engine: Path, private: Path, new: Path, repeats: int
) -> float:
    """Best time of adding `new` as a recipient (the data key unwrapped with `private`)."""
    add = [tensoracle, "cache", "encrypt", engine.name, "--key", str(private), "--to", str(new),
           "--cache-dir", str(cache)]  # fmt: skip
    remove = [tensoracle, "cache", "encrypt", engine.name, "--key", str(private),
              "--remove", key_id(new), "--cache-dir", str(cache)]  # fmt: skip
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(add, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - started)
        subprocess.run(remove, check=True, stdout=subprocess.DEVNULL)
    return best


def copy_seconds(engine: Path, copy: Path, repeats: int) -> float:
    """Best time of copying the file of `engine` to `copy` and syncing it (what a rewrite of the
    whole file costs at least)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        shutil.copyfile(engine, copy)
        with copy.open("rb+") as file:
            os.fsync(file.fileno())
        best = min(best, time.perf_counter() - started)
        copy.unlink()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gib", type=float, default=1.0, help="plan size in GiB (default 1)"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="best of N rounds (default 5)"
    )
    parser.add_argument(
        "--memory-gib", type=float, default=4.0,
        help="plan size in GiB for the peak memory figure (default 4)",
    )  # fmt: skip
    parser.add_argument(
        "--rewrap-mib", type=int, nargs=2, default=[64, 1024], metavar=("SMALL", "LARGE"),
        help="plan sizes in MiB of the re-wrapped entries (default 64 1024)",
    )  # fmt: skip
    args = harness.parse(
        parser,
        {"gib": 1 / 16, "memory_gib": 1 / 4, "rewrap_mib": [16, 64], "repeats": 1},
    )
    size = int(args.gib * (1 << 30)) // 8 * 8
    tensoracle = tensoracle_command()

    directory = Path(tempfile.mkdtemp(prefix="tensoracle-bench-"))
    try:
        private, public = make_key(directory, "node")
        _, other = make_key(directory, "other")
        cache = directory / "cache"
        engine = encrypted_entry(tensoracle, cache, "bench", size, public)
        manifest = directory / "bench.json"
        write_manifest(manifest, engine, "bench")
        signing, verify = directory / "signing.pem", directory / "verify.pem"
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(signing)],
                       check=True)  # fmt: skip
        subprocess.run(["openssl", "pkey", "-in", str(signing), "-pubout", "-out", str(verify)],
                       check=True)  # fmt: skip
        signed = signed_manifest(directory, engine, "bench", signing)
        _, offset = header_of(engine)
        aead = AESGCM(data_key_of(engine, private))
        read_and_hash(engine)  # warm the page cache
        reads = {"1mib": bytearray(MIB), "4mib": bytearray(CHUNK)}
        assert streamed(manifest, "bench", cache, private, reads["1mib"]) == size
        assert streamed(signed, "bench", cache, private, reads["1mib"], verify) == size

        load_before = os.getloadavg()
        best = harness.interleaved_best(
            args.repeats,
            {
                "ours_1mib": lambda: streamed(
                    manifest, "bench", cache, private, reads["1mib"]
                ),
                "read_sha256": lambda: read_and_hash(engine),
                "ours_4mib": lambda: streamed(
                    manifest, "bench", cache, private, reads["4mib"]
                ),
                "read_aes": lambda: read_and_open(engine, offset, aead),
                "signed_1mib": lambda: streamed(
                    signed, "bench", cache, private, reads["1mib"], verify
                ),
                "signed_4mib": lambda: streamed(
                    signed, "bench", cache, private, reads["4mib"], verify
                ),
            },
        )
        load_after = os.getloadavg()
        engine.unlink()

        rewrap, copy = {}, {}
        for mib in args.rewrap_mib:
            entry = encrypted_entry(
                tensoracle, cache, f"rewrap{mib}", mib * MIB, public
            )
            rewrap[mib] = rewrap_seconds(
                tensoracle, cache, entry, private, other, args.repeats
            )
            copy[mib] = copy_seconds(entry, directory / "copy.engine", args.repeats)
            entry.unlink()
        memory_size = int(args.memory_gib * (1 << 30)) // 8 * 8
        big_peak, tiny_peak = memory_figure(
            tensoracle, directory, memory_size, private, public
        )
        gib = size / (1 << 30)

        def line(label: str, key: str) -> str:
            return f"{label:<58} {best[key]:.3f} s ({gib / best[key]:.2f} GiB/s)"

        print(
            f"encrypted engine: {gib:.2f} GiB plan, best of {args.repeats} interleaved rounds"
        )
        before = " ".join(f"{value:.2f}" for value in load_before)
        after = " ".join(f"{value:.2f}" for value in load_after)
        print(f"load average (1/5/15 min): {before} before, {after} after, "
              f"{os.cpu_count()} CPUs")  # fmt: skip
        print(
            line(
                "streamed decrypted open + hand-over, 1 MiB reads (ours):", "ours_1mib"
            )
        )
        print(
            line(
                "streamed decrypted open + hand-over, 4 MiB reads (ours):", "ours_4mib"
            )
        )
        print(line("  signed, opened with the verify key, 1 MiB reads:", "signed_1mib"))
        print(line("  signed, opened with the verify key, 4 MiB reads:", "signed_4mib"))
        print(line("read once + SHA-256 (baseline):", "read_sha256"))
        print(
            line("read once + AES-256-GCM open of each chunk (baseline):", "read_aes")
        )
        for read, label in (("1mib", "1 MiB"), ("4mib", "4 MiB")):
            print(f"ratio ({label} reads / read + SHA-256): "
                  f"{best[f'ours_{read}'] / best['read_sha256']:.2f}x (goal <= 1.2x); "
                  f"/ read + AES-256-GCM: "
                  f"{best[f'ours_{read}'] / best['read_aes']:.2f}x; signed, with the verify "
                  f"key: {best[f'signed_{read}'] / best['read_sha256']:.2f}x read + "
                  "SHA-256")  # fmt: skip
        small, large = args.rewrap_mib
        print(f"re-wrap for a new recipient (cache encrypt --key K --to NEW): {small} MiB plan "
              f"{rewrap[small]:.3f} s, {large} MiB plan {rewrap[large]:.3f} s; ratio "
              f"{rewrap[large] / rewrap[small]:.2f}x for {large / small:g}x the plan "
              "(goal: independent of the plan's size, 1x)")  # fmt: skip
        print(f"  a copy of the entry's file (shutil.copyfile, fsync): {small} MiB "
              f"{copy[small]:.3f} s, {large} MiB {copy[large]:.3f} s; the re-wrap "
              f"{rewrap[small] / copy[small]:.2f}x and "
              f"{rewrap[large] / copy[large]:.2f}x the copy")  # fmt: skip
        print(f"peak resident memory, streamed decrypted open + hand-over of a "
              f"{memory_size / (1 << 30):.2f} GiB plan: {big_peak / MIB:.1f} MiB; of a 1 MiB "
              f"plan: {tiny_peak / MIB:.1f} MiB; extra: {(big_peak - tiny_peak) / MIB:.1f} MiB "
              "(goal <= 64 MiB)")  # fmt: skip
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
