#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR/fuzz for FUZZ_SECONDS in total (60 by default), split
# evenly. Each target starts from its minimized corpus kept in the repository
# (cpp/fuzz/corpus/<target>/, the result of the last long campaign) plus, for the cache files, a
# few seeds made here. Exits non-zero when a target finds a crash; the input that crashed is kept
# under $FUZZ_WORK (a temporary directory, removed after a clean run, unless FUZZ_WORK is set; a
# set FUZZ_WORK keeps its corpus and grows it run after run). New inputs go to $FUZZ_WORK, never
# into the repository's corpus.
# The seeds are written by $PYTHON (python3 by default), which needs the `xxhash` package for the
# plan checksums and `cryptography` for the encrypted engines (encrypted_engine_seeds.py: valid
# files sealed for fuzz_encrypted_engine's fixed key and the near misses an open must refuse);
# `make fuzz` passes the project's .venv interpreter.
# The JSON parsers (engine header, weight record, bundle manifest) get inputs of up to 1 MiB and
# dictionaries of their member names and of JSON's tricky tokens (cpp/fuzz/dictionaries), and
# start from seeds that hold the hostile cases of docs/fuzzing.md: a header nested 20,000 levels
# deep, strings that are not UTF-8, members of the wrong type, and the shapes that made the old
# parser quadratic or reach its limits: many small objects, long arrays, branches nested exactly
# to the 64-level limit and one level beyond it (engine headers, weight records and manifests),
# the value caps exactly and one beyond (2^18 values for a header, 1,024 for a record), objects
# and arrays nested alternately, strings full of brackets, quotes and backslashes, one long
# string, and structure broken before a limit (what the parser's pre-scan skips or stops at).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR   (a build configured with -DTENSORACLE_FUZZ=ON)" >&2
    exit 2
fi
build_dir=$1
targets=(fuzz_engine_header fuzz_weight_record fuzz_bundle_manifest fuzz_cubin_elf fuzz_size_text
    fuzz_deploy_manifest fuzz_json_text fuzz_encrypted_engine)
kept=$(cd "$(dirname "$0")" && pwd)/corpus
total=${FUZZ_SECONDS:-60}
per_target=$(( total / ${#targets[@]} ))
if [ "$per_target" -lt 1 ]; then per_target=1; fi
if [ -n "${FUZZ_WORK:-}" ]; then
    work=$FUZZ_WORK
    keep=1
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/tensoracle-fuzz-XXXXXX")
    keep=0
fi
mkdir -p "$work"

# Seeds: valid files and a few near misses, so that mutation starts close to the format.
"${PYTHON:-python3}" - "$work" <<'PY'
import hashlib, json, os, struct, sys

try:
    import xxhash
except ImportError:
    sys.exit("cpp/fuzz/run.sh: the seed writer needs the Python package xxhash "
             "(pip install xxhash, or set PYTHON to an interpreter that has it)")

work = sys.argv[1]

def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

def engine(plan, conditions, references, version=1):
    header = canonical({
        "conditions": conditions,
        "plan": {"size": len(plan), "xxh3_128": xxhash.xxh3_128_hexdigest(plan)},
        "references": references,
    }).encode()
    return b"TSRCLENG" + struct.pack("<IQ", version, len(header)) + header + plan

def raw_engine(plan, references):
    """An engine whose references are the JSON text given, which no serializer would write."""
    header = (b'{"conditions":{"name":"m"},"plan":' + canonical(
        {"size": len(plan), "xxh3_128": xxhash.xxh3_128_hexdigest(plan)}).encode()
        + b',"references":' + references + b"}")
    return b"TSRCLENG" + struct.pack("<IQ", 1, len(header)) + header + plan

def objects(count):
    return b"[" + b",".join([b"{}"] * count) + b"]"

def numbers(count):
    return b"[" + b",".join([b"0"] * count) + b"]"

def branches(depth, count, first_extra=0):
    """An array of `count` branches nesting `depth` levels with it (the first `first_extra` more)."""
    def branch(levels):
        return b"[" * levels + b"]" * levels
    return b"[" + b",".join([branch(depth - 1 + first_extra)] + [branch(depth - 1)] * (count - 1)) + b"]"

def alternating(levels, first_extra=0):
    """Objects and arrays nested alternately, `levels` levels ({"a":[{"a":[...]}]})."""
    text, close = b"", b""
    for i in range(levels + first_extra):
        text += b'{"a":' if i % 2 == 0 else b"["
        close = (b"}" if i % 2 == 0 else b"]") + close
    return text + b"0" + close

def quoted_structure(count):
    """Strings full of brackets, braces, commas, colons and escaped quotes and backslashes."""
    return b"[" + b",".join([rb'"[[{{,:\"]]\\"', rb'"\\\\\"}}"'] * count) + b"]"

def record(path, size, mtime_ns, inode, sha):
    fields = {"inode": inode, "mtime_ns": mtime_ns, "path": path, "sha256": sha, "size": size}
    fields["record_sha256"] = hashlib.sha256(canonical(fields).encode()).hexdigest()
    return canonical(fields).encode()

seeds = {
    "engine": {
        "empty_plan": engine(b"", {"name": "m"}, {}),
        "small": engine(b"plan-bytes", {"name": "m", "shape": [1, -1, 2], "tf32": False},
                        {"workspace_limit": None, "outputs": ["y"]}),
        "unicode": engine(b"\x00\x01", {"name": "gr\u00fc\u00df"}, {"w": 1 << 40}),
        "newer": engine(b"p", {"name": "m"}, {}, version=2),
        "bare_magic": b"TSRCLENG",
        "nested_20000": raw_engine(b"p", b'{"a":' + b"[" * 20000 + b"]" * 20000 + b"}"),
        "not_utf8": raw_engine(b"p", b'{"built_at":"\xff\xfe"}'),
        "io_mistyped": engine(b"p", {"name": "m"}, {"io": "FLOAT"}),
        "io_tensor": engine(b"", {"name": "m", "gpu": None, "targets": ["sm89"]}, {"io": {
            "tensors": [{"name": "x", "mode": "INPUT", "dtype": "FLOAT", "shape": [1, -1],
                         "profile": {"min": [1, 1], "opt": [1, 2], "max": [1, 4]}}]}}),
        # The header object and references hold the shape: 62 levels left below them.
        "many_objects": raw_engine(b"p", b'{"a":' + objects(100_000) + b"}"),
        "long_array": raw_engine(b"p", b'{"a":' + numbers(200_000) + b"}"),
        "depth_at_limit": raw_engine(b"p", b'{"a":' + branches(62, 2_000) + b"}"),
        "depth_beyond_limit": raw_engine(b"p", b'{"a":' + branches(62, 2_000, 1) + b"}"),
        "header_of_objects": b"TSRCLENG" + struct.pack("<IQ", 1, 300_001) + objects(100_000),
        # The header's cap of 2^18 values: 7 values around references.a's array, then exactly the
        # cap, then one more.
        "values_at_limit": raw_engine(b"p", b'{"a":' + numbers((1 << 18) - 8) + b"}"),
        "values_beyond_limit": raw_engine(b"p", b'{"a":' + numbers((1 << 18) - 7) + b"}"),
        "alternating_at_limit": raw_engine(b"p", b'{"a":' + alternating(62) + b"}"),
        "alternating_beyond_limit": raw_engine(b"p", b'{"a":' + alternating(62, 1) + b"}"),
        "quoted_structure": raw_engine(b"p", b'{"a":' + quoted_structure(20_000) + b"}"),
        "long_string": raw_engine(b"p", b'{"a":"' + b"x" * 900_000 + b'"}'),
        "broken_before_limit": raw_engine(b"p", b'{"a":[1 2,' + b"[" * 100 + b"]" * 100 + b"]}"),
    },
    "weight": {
        "valid": record("/models/m.safetensors", 123, 1700000000123456789, 42, "ab" * 32),
        "negative_time": record("/w", 0, -5, 0, "0" * 64),
        "empty_object": b"{}",
        "many_objects": objects(20_000),
        "depth_at_limit": b'{"path":' + branches(63, 100) + b"}",
        "depth_beyond_limit": b'{"path":' + branches(63, 100, 1) + b"}",
        # The record's cap of 1,024 values, then one more.
        "values_at_limit": b'{"path":' + numbers(1022) + b"}",
        "values_beyond_limit": b'{"path":' + numbers(1023) + b"}",
        "quoted_structure": b'{"path":' + quoted_structure(100) + b"}",
    },
    "manifest": {
        "many_objects": b'{"schema_version":1,"entries":' + objects(300_000) + b"}",
        "long_array": b'{"schema_version":1,"entries":' + numbers(400_000) + b"}",
        "depth_at_limit": b'{"schema_version":1,"entries":' + branches(63, 3_000) + b"}",
        "depth_beyond_limit": b'{"schema_version":1,"entries":' + branches(63, 3_000, 1) + b"}",
        "alternating_beyond_limit": b'{"schema_version":1,"entries":' + alternating(63, 1) + b"}",
        "quoted_structure": b'{"schema_version":1,"entries":' + quoted_structure(40_000) + b"}",
        "long_string": b'{"schema_version":1,"entries":"' + b"x" * 900_000 + b'"}',
        "broken_before_limit": b'{"schema_version":1,"entries":[,' + b"[" * 100 + b"]" * 100 + b"]}",
    },
}
def deploy_entry(name, targets, os_name="linux", **changes):
    """A deployment manifest's entry as tensoracle build writes it, its file not cached."""
    conditions = {"name": name, "graph_version": "1", "backend": "tensorrt_rtx",
                  "backend_version": "1.7.1.116", "gpu": None, "targets": targets,
                  "os": os_name, "arch": "x86_64"}
    digest = hashlib.sha256(canonical(conditions).encode()).hexdigest()
    entry = {"recipe": name, "graph_version": "1", "file_name": f"{name}-{digest}.engine",
             "conditions": conditions, "backend": "tensorrt_rtx",
             "backend_version": "1.7.1.116", "targets": targets, "hardware_compatibility": None,
             "io": {"tensors": [{"name": "x", "mode": "INPUT", "dtype": "FLOAT",
                                 "shape": [1, -1]}]},
             "plan": {"size": 1024, "xxh3_128": "0" * 32}, "engine_bytes": 1500, "fleet": None}
    entry.update(changes)
    return entry

def deploy_manifest(entries):
    return json.dumps({"schema_version": 1, "spec": "m:RECIPES", "remote": None,
                       "entries": entries}).encode()

seeds["deploy"] = {
    "valid": deploy_manifest([deploy_entry("encoder", ["sm86", "sm89"]),
                              deploy_entry("decoder", ["sm89", "sm120"])]),
    "tied": deploy_manifest([deploy_entry("e", ["sm89"], graph_version="1")] +
                            [dict(deploy_entry("e", ["sm89", f"sm{100 + i}"]))
                             for i in range(200)]),
    "other_platform": deploy_manifest([deploy_entry("e", ["sm89"], "windows"),
                                       deploy_entry("e", ["sm89"])]),
    "edited_recipe": deploy_manifest([deploy_entry("encoder", ["sm89"], recipe="decoder")]),
    "byte_order_mark": b"\xef\xbb\xbf" + deploy_manifest([deploy_entry("e", ["sm89"])]),
    "nul_after": deploy_manifest([deploy_entry("e", ["sm89"])]) + b"\x00garbage",
    "io_of_objects": deploy_manifest([deploy_entry("e", ["sm89"], io="IO")]).replace(
        b'"IO"', objects(100_000)),
    "many_recipes": deploy_manifest([deploy_entry(f"r{i}", ["sm89"]) for i in range(300)]),
}
for kind, files in seeds.items():
    os.makedirs(os.path.join(work, "seeds", kind), exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(work, "seeds", kind, name), "wb") as out:
            out.write(data)
PY
"${PYTHON:-python3}" "$(dirname "$0")/encrypted_engine_seeds.py" "$work/seeds/encrypted"

status=0
for target in "${targets[@]}"; do
    binary=$build_dir/fuzz/$target
    if [ ! -x "$binary" ]; then
        echo "fuzz target $binary is missing; build with -DTENSORACLE_FUZZ=ON" >&2
        exit 2
    fi
    seeds=()
    case $target in
        fuzz_engine_header) seeds+=("$work/seeds/engine") ;;
        fuzz_weight_record) seeds+=("$work/seeds/weight") ;;
        fuzz_bundle_manifest) seeds+=("$work/seeds/manifest") ;;
        fuzz_deploy_manifest) seeds+=("$work/seeds/deploy") ;;
        fuzz_json_text) seeds+=("$work/seeds/deploy" "$work/seeds/manifest") ;;
        fuzz_encrypted_engine) seeds+=("$work/seeds/encrypted") ;;
    esac
    if [ -d "$kept/$target" ]; then seeds+=("$kept/$target"); fi
    corpus=$work/corpus/$target
    mkdir -p "$corpus"
    options=()
    dictionary=$(cd "$(dirname "$0")" && pwd)/dictionaries/$target.dict
    if [ -f "$dictionary" ]; then
        cat "$dictionary" "$(dirname "$dictionary")/json.dict" > "$work/$target.dict"
        options+=(-dict="$work/$target.dict")
        case $target in
            # Seeds of two 4 MiB chunks and more: a cap above them, lengths grown as libFuzzer does.
            fuzz_encrypted_engine) options+=(-max_len=9437184) ;;
            # -len_control=0: mutations may reach max_len at once, not only after a long run.
            *) options+=(-max_len=1048576 -len_control=0) ;;
        esac
    fi
    echo "== $target: ${per_target}s (corpus $corpus)"
    if ! "$binary" -max_total_time="$per_target" -print_final_stats=1 "${options[@]}" \
        -artifact_prefix="$work/$target-" "$corpus" "${seeds[@]}"; then
        echo "FUZZ FAILURE in $target; the crashing input is under $work/$target-*" >&2
        status=1
    fi
done
if [ "$status" -eq 0 ] && [ "$keep" -eq 0 ]; then
    rm -rf "$work"
fi
exit $status
