"""Tests for tensoracle.producer against the 1.x producer interface: KernelSpec, the checks of
compile_bundle in their order (nothing written before the output directory is made), the
manifest and bundle.cpp it writes, reproducibility and the cubin checks.

Real compiles use small kernels; the bundles shared by several tests are built once per module.
No GPU is needed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import json
import multiprocessing
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
from cubin_support import hide_torch, require_producer_tools

import tensoracle.producer as producer
from tensoracle import bundle
from tensoracle.errors import KernelCompileError
from tensoracle.producer import KernelSpec, compile_bundle
from tensoracle.producer import compile as producer_compile
from tensoracle.producer.cubin import expected_layout, parameter_layout
from tensoracle.producer.tools import find_tool, tool_version

require_producer_tools()  # fails, or skips where TENSORACLE_TESTS_WITHOUT_PRODUCER=1
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
SITE = Path(importlib.metadata.distribution("triton").locate_file(""))
PTXAS = find_tool("ptxas")
CUOBJDUMP = find_tool("cuobjdump")


@triton.jit
def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, alpha * tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def row_dot(a_ptr, b_ptr, out_ptr, k, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, k, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < k
        a = tl.load(a_ptr + row * k + offsets, mask=mask, other=0.0)
        b = tl.load(b_ptr + row * k + offsets, mask=mask, other=0.0)
        acc += a * b
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def copy_i8(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


SCALE_SIGNATURE = (("x_ptr", "*fp32"), ("out_ptr", "*fp32"), ("n", "i32"), ("alpha", "fp32"))
DOT_SIGNATURE = (("a_ptr", "*fp32"), ("b_ptr", "*fp32"), ("out_ptr", "*fp32"), ("k", "i32"))
DOT_DIVISORS = {"a_ptr": 16, "b_ptr": 16, "out_ptr": 16, "k": 8}

SPECS = (
    KernelSpec("scale", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"alpha": 1}),
    KernelSpec("dot.specialized", row_dot, DOT_SIGNATURE, {"BLOCK": 512}, DOT_DIVISORS),
    KernelSpec("row-dot", row_dot, DOT_SIGNATURE, {"BLOCK": 512}),
    KernelSpec(
        "copy_i8",
        copy_i8,
        (("src_ptr", "*i8"), ("dst_ptr", "*i8"), ("n", "i32")),
        {"BLOCK": 512},
        num_warps=2,
    ),
)
TRIO = (86, 89, 120)
ENTRY_KEYS = {
    "id",
    "file",
    "target_sm",
    "entry_symbol",
    "embedded_symbol",
    "sha256",
    "bytes",
    "signature",
    "hidden_trailing_parameters",
    "resources",
    "specialization",
    "source_sha256",
}
RESOURCE_KEYS = {
    "compiled_shared_memory_bytes",
    "launch_dynamic_shared_memory_bytes",
    "registers_per_thread",
    "global_scratch_bytes",
    "profile_scratch_bytes",
}
HIDDEN = [
    {"name": "global_scratch", "parameter_bytes": 8},
    {"name": "profile_scratch", "parameter_bytes": 8},
]
ONE = (KernelSpec("scale", scale, SCALE_SIGNATURE, {"BLOCK": 256}),)


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _canonical_digest(manifest: dict) -> str:
    body = {key: value for key, value in manifest.items() if key != "bundle_sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(autouse=True)
def _without_torch(monkeypatch):
    hide_torch(monkeypatch)


@pytest.fixture(autouse=True)
def _triton_variables(monkeypatch):
    # compile_bundle sets these for good; monkeypatch puts the test process back afterwards.
    for name in (
        "TRITON_PTXAS_PATH",
        "TRITON_PTXAS_BLACKWELL_PATH",
        "TRITON_DISABLE_LINE_INFO",
        "TRITON_ALWAYS_COMPILE",
    ):
        monkeypatch.setenv(name, "unset-by-test")
        monkeypatch.delenv(name)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The four test kernels for the 1.x trio, built by two workers: (directory, manifest)."""
    output = tmp_path_factory.mktemp("bundle") / "trio"
    with pytest.MonkeyPatch.context() as patch:
        hide_torch(patch)
        return output, compile_bundle(SPECS, output, jobs=2)


# --- KernelSpec ---------------------------------------------------------------------------


def test_kernel_spec_has_the_1x_fields_in_order_then_keyword_only_knobs():
    fields = dataclasses.fields(KernelSpec)
    assert [f.name for f in fields] == [
        "name",
        "function",
        "signature",
        "constexprs",
        "divisible_by",
        "num_warps",
        "num_stages",
    ]
    assert [f.kw_only for f in fields] == [False] * 5 + [True, True]
    assert all(f.default is dataclasses.MISSING for f in fields[:4])
    assert fields[4].default_factory is dict
    assert (fields[5].default, fields[6].default) == (4, 3)
    spec = KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256})
    assert spec.divisible_by == {}
    assert spec.num_warps == 4
    assert spec.num_stages == 3
    assert KernelSpec("k", scale, SCALE_SIGNATURE, {}, {"n": 4}).divisible_by == {"n": 4}
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        KernelSpec("k", scale, SCALE_SIGNATURE, {}, {}, 8)  # type: ignore[misc]


def test_importing_the_producer_imports_neither_triton_nor_torch():
    code = (
        "import sys, tensoracle.producer\n"
        "assert 'triton' not in sys.modules and 'torch' not in sys.modules\n"
        "assert 'tensoracle.bundle' in sys.modules\n"
        "print(sorted(tensoracle.producer.__all__))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['KernelSpec', 'compile_bundle']"


# --- the checks before anything is written, in order ------------------------------------


@pytest.fixture
def output(tmp_path):
    """An output path two levels below tmp_path; each early failure must leave it absent."""
    path = tmp_path / "nested" / "bundle"
    yield path
    assert not (tmp_path / "nested").exists()


def _absent(package: str, real=importlib.metadata.distribution):
    def distribution(name):
        if name == package:
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    return distribution


def _without_file(package: str, root: Path, real=importlib.metadata.distribution):
    class Installed:
        def locate_file(self, relative):
            return root / relative

    def distribution(name):
        return Installed() if name == package else real(name)

    return distribution


def test_1_torch_already_imported(monkeypatch, output):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    monkeypatch.setitem(sys.modules, "triton", None)  # step 2 would fail too: torch comes first
    with pytest.raises(ValueError, match="torch"):
        compile_bundle(ONE, output)


def test_2_triton_not_importable(monkeypatch, output):
    monkeypatch.setitem(sys.modules, "triton", None)
    with pytest.raises(ImportError) as raised:
        compile_bundle(ONE, output)
    assert "Triton" in str(raised.value)
    assert "tensoracle[producer]" in str(raised.value)


def test_3_triton_version_other_than_3_8_0(monkeypatch, output):
    monkeypatch.setattr(triton, "__version__", "3.7.1")
    monkeypatch.setattr(importlib.metadata, "distribution", _absent("nvidia-cuda-nvcc"))
    with pytest.raises(ValueError, match=r"3\.8\.0.*3\.7\.1"):
        compile_bundle(ONE, output)


@pytest.mark.parametrize(
    ("tool", "package"), [("ptxas", "nvidia-cuda-nvcc"), ("cuobjdump", "nvidia-cuda-cuobjdump")]
)
def test_4_5_tool_wheel_absent(monkeypatch, output, tool, package):
    monkeypatch.setattr(importlib.metadata, "distribution", _absent(package))
    with pytest.raises(ImportError) as raised:
        compile_bundle(ONE, output)
    message = str(raised.value)
    for part in (package, f"nvidia/cu13/bin/{tool}", "tensoracle[producer]", f"{tool}="):
        assert part in message


@pytest.mark.parametrize(
    ("tool", "package"), [("ptxas", "nvidia-cuda-nvcc"), ("cuobjdump", "nvidia-cuda-cuobjdump")]
)
def test_4_5_tool_missing_from_installed_wheel(monkeypatch, tmp_path, output, tool, package):
    monkeypatch.setattr(importlib.metadata, "distribution", _without_file(package, tmp_path))
    with pytest.raises(FileNotFoundError) as raised:
        compile_bundle(ONE, output)
    message = str(raised.value)
    full = str(tmp_path / "nvidia" / "cu13" / "bin" / tool)
    for part in (package, f"nvidia/cu13/bin/{tool}", full, "tensoracle[producer]", f"{tool}="):
        assert part in message


def test_4_ptxas_checked_before_cuobjdump(monkeypatch, output):
    def distribution(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(ImportError, match="ptxas="):
        compile_bundle(ONE, output)


def test_4_5_explicit_paths_are_used_as_is_and_cuda_home_is_ignored(monkeypatch, tmp_path, output):
    def distribution(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    monkeypatch.setenv("CUDA_HOME", str(PTXAS.parents[1]))
    # Not checked at steps 4 and 5: running the missing ptxas at step 6 is what fails.
    with pytest.raises(FileNotFoundError):
        compile_bundle(ONE, output, ptxas=tmp_path / "no-ptxas", cuobjdump=tmp_path / "none")
    # With no package installed, CUDA_HOME does not stand in for the wheel.
    with pytest.raises(ImportError):
        compile_bundle(ONE, output)


@pytest.mark.parametrize(
    ("printed", "version"),
    [
        ("Cuda compilation tools, release 12.9, V12.9.86", "12.9.86"),
        ("Cuda compilation tools, release 14.0, V14.0.10", "14.0.10"),
        ("Cuda compilation tools, release 13.1, V13.1.115", "13.1.115"),
    ],
)
def test_6_ptxas_outside_13_2_to_14(tmp_path, output, printed, version):
    ptxas = _script(tmp_path / "ptxas", f'echo "{printed}"\n')
    with pytest.raises(ValueError, match="ptxas") as raised:
        compile_bundle(ONE, output, ptxas=ptxas)
    for part in ("ptxas", ">=13.2", "<14", version):
        assert part in str(raised.value)


def test_6_ptxas_without_a_version_or_failing(tmp_path, output):
    silent = _script(tmp_path / "silent", "echo 'ptxas, no release here'\n")
    with pytest.raises(ValueError, match=re.escape("V<x.y.z>")):
        compile_bundle(ONE, output, ptxas=silent)
    failing = _script(tmp_path / "failing", "echo V13.2.86\nexit 3\n")
    with pytest.raises(subprocess.CalledProcessError):
        compile_bundle(ONE, output, ptxas=failing)


def test_6_ptxas_version_read_from_stderr_then_7_names(tmp_path, output):
    on_stderr = _script(tmp_path / "ptxas", "echo 'release 13.2, V13.2.86' >&2\n")
    with pytest.raises(ValueError, match="kernel names"):
        compile_bundle((), output, ptxas=on_stderr)


@pytest.mark.parametrize(
    "names",
    [(), ("a", "a"), ("dot.x", "dot_x"), ("a-b", "a.b")],
    ids=["empty", "repeated", "same-symbol-dot", "same-symbol-dash"],
)
def test_7_kernel_names_empty_repeated_or_colliding(output, names):
    specs = tuple(KernelSpec(name, scale, SCALE_SIGNATURE, {"BLOCK": 256}) for name in names)
    with pytest.raises(ValueError, match="kernel names"):
        compile_bundle(specs, output)


@pytest.mark.parametrize(
    "options",
    [
        {"targets": ()},
        {"targets": (86, 86)},
        {"targets": (75,)},
        {"targets": (True,)},
        {"jobs": 0},
        {"jobs": 1.5},
    ],
)
def test_7_our_options_checked_before_anything_is_written(output, options):
    with pytest.raises(ValueError, match=r"targets|jobs"):
        compile_bundle(ONE, output, **options)


# --- steps 8 to 11 ------------------------------------------------------------------------


def test_8_9_existing_output_is_written_into_and_triton_variables_persist(tmp_path):
    output = tmp_path / "existing"
    (output / "cubins" / "sm86").mkdir(parents=True)
    (output / "notes.txt").write_text("kept")
    (output / "bundle.json").write_text("stale")
    (output / "cubins" / "sm86" / "scale.cubin").write_bytes(b"stale")
    (output / "cubins" / "sm86" / "other.cubin").write_bytes(b"other")
    manifest = compile_bundle(ONE, output, targets=(86,), jobs=1)
    assert (output / "notes.txt").read_text() == "kept"
    assert (output / "cubins" / "sm86" / "other.cubin").read_bytes() == b"other"
    data = (output / "cubins" / "sm86" / "scale.cubin").read_bytes()
    assert hashlib.sha256(data).hexdigest() == manifest["entries"][0]["sha256"]
    assert json.loads((output / "bundle.json").read_text()) == manifest
    assert os.environ["TRITON_PTXAS_PATH"] == str(PTXAS)
    assert os.environ["TRITON_PTXAS_BLACKWELL_PATH"] == str(PTXAS)
    assert os.environ["TRITON_DISABLE_LINE_INFO"] == "1"
    assert os.environ["TRITON_ALWAYS_COMPILE"] == "1"


def test_explicit_tools_are_the_ones_run(tmp_path):
    log = tmp_path / "calls.log"
    ptxas = _script(tmp_path / "ptxas", f'echo "ptxas $1" >> "{log}"\nexec "{PTXAS}" "$@"\n')
    cuobjdump = _script(
        tmp_path / "cuobjdump", f'echo "cuobjdump $1" >> "{log}"\nexec "{CUOBJDUMP}" "$@"\n'
    )
    manifest = compile_bundle(
        ONE, tmp_path / "out", ptxas=ptxas, cuobjdump=cuobjdump, targets=(120,), jobs=1
    )
    calls = log.read_text().splitlines()
    assert "ptxas --version" in calls
    # Triton compiled with our ptxas (sm120 goes through the Blackwell variable) ...
    assert any(call.startswith("ptxas ") and call != "ptxas --version" for call in calls)
    # ... and both cuobjdump reports were read.
    assert {"cuobjdump -elf", "cuobjdump --dump-resource-usage"} <= set(calls)
    assert manifest["producer"]["ptxas"] == tool_version(PTXAS)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (KernelSpec("has space", scale, SCALE_SIGNATURE, {"BLOCK": 256}), "a-zA-Z0-9_"),
        (KernelSpec("a/b", scale, SCALE_SIGNATURE, {"BLOCK": 256}), "a-zA-Z0-9_"),
        (KernelSpec("k", scale, SCALE_SIGNATURE[:3], {"BLOCK": 256}), "signature names"),
        (KernelSpec("k", scale, SCALE_SIGNATURE[::-1], {"BLOCK": 256}), "signature names"),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {}), "signature names"),
        (
            KernelSpec("k", scale, (*SCALE_SIGNATURE, ("BLOCK", "i32")), {"BLOCK": 256}),
            "signature names",
        ),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256, "nope": 1}), "constexprs"),
        (
            KernelSpec("k", scale, (("x_ptr", "*fp64"), *SCALE_SIGNATURE[1:]), {"BLOCK": 256}),
            "type",
        ),
        (
            KernelSpec(
                "k", scale, (*SCALE_SIGNATURE[:2], ("n", "i64"), SCALE_SIGNATURE[3]), {"BLOCK": 256}
            ),
            "type",
        ),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"n": 3}), "power of two"),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"n": 0}), "power of two"),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"n": 1 << 31}), "power of two"),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"n": True}), "power of two"),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"n": 16.0}), "power of two"),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"alpha": 2}), "float"),
        (KernelSpec("k", scale, SCALE_SIGNATURE, {"BLOCK": 256}, {"BLOCK": 2}), "divisible_by"),
        (KernelSpec("k", len, SCALE_SIGNATURE, {"BLOCK": 256}), "triton.jit"),
    ],
)
def test_10_spec_rules(tmp_path, spec, match):
    with pytest.raises(ValueError, match=match):
        compile_bundle((spec,), tmp_path / "out", targets=(86,), jobs=1)
    assert not (tmp_path / "out" / "cubins" / "sm86" / f"{spec.name}.cubin").exists()


def _fake_function(count: int):
    return types.SimpleNamespace(arg_names=[f"a{i}" for i in range(count)], src="def f(): pass")


@pytest.mark.parametrize("count", [0, 15])
def test_10_public_argument_count_1_to_14(tmp_path, count):
    signature = tuple((f"a{i}", "i32") for i in range(count))
    spec = KernelSpec("k", _fake_function(count), signature, {})
    with pytest.raises(ValueError, match="1 to 14"):
        compile_bundle((spec,), tmp_path / "out", targets=(86,), jobs=1)


def test_10_outer_loop_over_sms_inner_over_specs(tmp_path):
    bad = KernelSpec("bad", scale, SCALE_SIGNATURE[:3], {"BLOCK": 256})
    with pytest.raises(ValueError, match="'bad'"):
        compile_bundle((*ONE, bad), tmp_path / "out", targets=(86, 89), jobs=1)
    assert _tree(tmp_path / "out").keys() == {"cubins/sm86/scale.cubin"}


def test_10_triton_failure_is_a_value_error_naming_kernel_and_sm(tmp_path):
    spec = KernelSpec("odd-block", scale, SCALE_SIGNATURE, {"BLOCK": 100})
    with pytest.raises(KernelCompileError) as raised:
        compile_bundle((spec,), tmp_path / "out", targets=(89,), jobs=1)
    assert isinstance(raised.value, ValueError)
    assert "'odd-block'" in str(raised.value)
    assert "sm89" in str(raised.value)


def test_10_parallel_build_reports_the_first_failure_in_order(tmp_path):
    specs = (
        *ONE,
        KernelSpec("first-bad", scale, SCALE_SIGNATURE, {"BLOCK": 100}),
        KernelSpec("second-bad", scale, SCALE_SIGNATURE[:3], {"BLOCK": 256}),
    )
    with pytest.raises(KernelCompileError, match="'first-bad'"):
        compile_bundle(specs, tmp_path / "out", targets=(86, 89), jobs=3)


def test_10_cubin_sm_must_match_the_target(monkeypatch, tmp_path):
    monkeypatch.setattr(bundle, "cubin_sm", lambda data, **options: "sm89")
    with pytest.raises(ValueError, match="sm89, not sm86"):
        compile_bundle(ONE, tmp_path / "out", targets=(86,), jobs=1)


def test_10_parameter_layout_from_cuobjdump(tmp_path):
    # A cuobjdump that reports the 4-byte arguments as 8 bytes: the layout no longer matches.
    cuobjdump = _script(
        tmp_path / "cuobjdump",
        f"""\
        if [ "$1" = "-elf" ]; then
            "{CUOBJDUMP}" "$@" | sed 's/Size    : 0x4$/Size    : 0x8/'
        else
            exec "{CUOBJDUMP}" "$@"
        fi
        """,
    )
    with pytest.raises(ValueError, match="parameter layout"):
        compile_bundle(ONE, tmp_path / "out", cuobjdump=cuobjdump, targets=(86,), jobs=1)


def test_parameter_layout_rules():
    # Pointers 8 bytes, others 4, then two 8-byte pointers, each naturally aligned.
    assert expected_layout(["*fp32", "i32", "fp32", "*i8", "i32"]) == [
        (0, 0, 8),
        (1, 8, 4),
        (2, 12, 4),
        (3, 16, 8),
        (4, 24, 4),
        (5, 32, 8),
        (6, 40, 8),
    ]
    dump = textwrap.dedent(
        """\
        .nv.info.k
        \tValue:\tIndex : 0x0\tOrdinal : 0x1\tOffset  : 0x8\tSize    : 0x4
        \tValue:\tIndex : 0x0\tOrdinal : 0x0\tOffset  : 0x0\tSize    : 0x8

        .nv.info.other
        \tValue:\tIndex : 0x0\tOrdinal : 0x0\tOffset  : 0x0\tSize    : 0x4
        """
    )
    assert parameter_layout(dump, "k") == [(0, 0, 8), (1, 8, 4)]
    assert parameter_layout(dump, "missing") == []


def test_10_register_count_required(tmp_path):
    cuobjdump = _script(
        tmp_path / "cuobjdump",
        f"""\
        if [ "$1" = "--dump-resource-usage" ]; then
            "{CUOBJDUMP}" "$@" | sed 's/REG:[0-9]*//'
        else
            exec "{CUOBJDUMP}" "$@"
        fi
        """,
    )
    with pytest.raises(ValueError, match="REG"):
        compile_bundle(ONE, tmp_path / "out", cuobjdump=cuobjdump, targets=(86,), jobs=1)


@pytest.mark.parametrize("field", ["global_scratch_size", "profile_scratch_size"])
def test_10_scratch_memory_refused(monkeypatch, tmp_path, field):
    real = producer_compile._triton_compile

    def with_scratch(spec, sm, where):
        compiled = real(spec, sm, where)
        metadata = compiled.metadata._replace(**{field: 256})
        return types.SimpleNamespace(metadata=metadata, asm=compiled.asm)

    monkeypatch.setattr(producer_compile, "_triton_compile", with_scratch)
    with pytest.raises(ValueError, match="scratch"):
        compile_bundle(ONE, tmp_path / "out", targets=(86,), jobs=1)


def test_11_torch_imported_meanwhile(monkeypatch, tmp_path):
    real = bundle.inspect_bundle

    def inspect_then_import_torch(root, **kwargs):
        monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
        return real(root, **kwargs)

    monkeypatch.setattr(bundle, "inspect_bundle", inspect_then_import_torch)
    with pytest.raises(ValueError, match="torch"):
        compile_bundle(ONE, tmp_path / "out", targets=(86,), jobs=1)


# --- the bundle ---------------------------------------------------------------------------


def test_layout_is_bundle_json_bundle_cpp_and_one_cubin_per_sm_and_kernel(built):
    output, manifest = built
    expected = {"bundle.json", "bundle.cpp"}
    expected |= {f"cubins/sm{sm}/{spec.name}.cubin" for sm in TRIO for spec in SPECS}
    assert set(_tree(output)) == expected
    assert json.loads((output / "bundle.json").read_text("utf-8")) == manifest
    text = (output / "bundle.json").read_text("utf-8")
    assert text == json.dumps(manifest, sort_keys=True, indent=2) + "\n"


def test_manifest_top_level(built):
    output, manifest = built
    assert set(manifest) == {"schema_version", "producer", "entries", "bundle_sha256"}
    assert manifest["schema_version"] == 1
    assert type(manifest["schema_version"]) is int
    assert manifest["producer"] == {
        "triton": "3.8.0",
        "ptxas": manifest["producer"]["ptxas"],
    }
    assert re.fullmatch(r"13\.2\.\d+", manifest["producer"]["ptxas"])
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["bundle_sha256"])
    assert manifest["bundle_sha256"] == bundle.bundle_sha256(manifest)
    assert manifest["bundle_sha256"] == _canonical_digest(manifest)
    assert bundle.inspect_bundle(output) == manifest["bundle_sha256"]


def test_entries_in_producer_order_with_the_1x_keys(built):
    output, manifest = built
    entries = manifest["entries"]
    assert [e["id"] for e in entries] == [f"sm{sm}.{s.name}" for sm in TRIO for s in SPECS]
    for entry, (sm, spec) in zip(entries, [(sm, s) for sm in TRIO for s in SPECS], strict=True):
        assert set(entry) == ENTRY_KEYS
        assert entry["file"] == f"cubins/sm{sm}/{spec.name}.cubin"
        assert entry["target_sm"] == f"sm{sm}"
        symbol = "tensoracle_cubin_" + re.sub(r"[^a-zA-Z0-9_]", "_", f"sm{sm}_{spec.name}")
        assert entry["embedded_symbol"] == symbol
        assert entry["entry_symbol"] == spec.function.__name__
        data = (output / entry["file"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["bytes"] == len(data)
        assert type(entry["bytes"]) is int
        assert bundle.cubin_sm(data) == f"sm{sm}"
        assert entry["signature"] == [{"name": n, "type": t} for n, t in spec.signature]
        assert entry["hidden_trailing_parameters"] == HIDDEN
        resources = entry["resources"]
        assert set(resources) == RESOURCE_KEYS
        assert all(type(value) is int for value in resources.values())
        assert (
            resources["launch_dynamic_shared_memory_bytes"]
            == (resources["compiled_shared_memory_bytes"])
        )
        assert resources["compiled_shared_memory_bytes"] >= 0
        assert resources["registers_per_thread"] >= 1
        assert resources["global_scratch_bytes"] == resources["profile_scratch_bytes"] == 0
        assert entry["specialization"] == {"divisible_by": spec.divisible_by}
        source = hashlib.sha256(spec.function.src.encode("utf-8")).hexdigest()
        assert entry["source_sha256"] == source
    by_id = {entry["id"]: entry for entry in entries}
    assert by_id["sm86.dot.specialized"]["embedded_symbol"] == (
        "tensoracle_cubin_sm86_dot_specialized"
    )
    assert by_id["sm120.row-dot"]["embedded_symbol"] == "tensoracle_cubin_sm120_row_dot"


def test_divisors_specialise_the_cubin_and_are_written(built):
    _, manifest = built
    by_id = {entry["id"]: entry for entry in manifest["entries"]}
    specialised, plain = by_id["sm89.dot.specialized"], by_id["sm89.row-dot"]
    assert specialised["specialization"]["divisible_by"] == DOT_DIVISORS
    assert plain["specialization"]["divisible_by"] == {}
    assert specialised["source_sha256"] == plain["source_sha256"]
    assert specialised["sha256"] != plain["sha256"]
    assert by_id["sm86.scale"]["specialization"]["divisible_by"] == {"alpha": 1}


def test_serial_build_is_byte_identical_to_the_parallel_one(built, tmp_path):
    output, manifest = built
    again = compile_bundle(SPECS, tmp_path / "serial", jobs=1)
    assert again == manifest
    assert _tree(tmp_path / "serial") == _tree(output)


def test_without_fork_the_pairs_compile_one_after_another_in_this_process(
    built, tmp_path, monkeypatch
):
    # As on Windows, whose multiprocessing has no fork: jobs=2 starts no worker process.
    output, manifest = built
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool of worker processes was started")

    monkeypatch.setattr(producer_compile, "ProcessPoolExecutor", no_pool)
    again = compile_bundle(SPECS, tmp_path / "unforked", jobs=2)
    assert again == manifest
    assert _tree(tmp_path / "unforked") == _tree(output)


def test_jobs_default_to_the_cpus_this_process_may_use_else_the_cpu_count(monkeypatch):
    assert producer._check_jobs(None) == len(os.sched_getaffinity(0))
    monkeypatch.delattr(os, "sched_getaffinity")  # as on Windows
    assert producer._check_jobs(None) == (os.cpu_count() or 1)


def test_no_host_name_or_absolute_path_in_the_bundle(built):
    output, manifest = built
    secrets = {socket.gethostname(), str(output), str(Path.home()), str(REPO), str(SITE)}
    secrets |= {str(PTXAS), str(CUOBJDUMP), "/tmp", "/home"}
    for name in ("bundle.json", "bundle.cpp"):
        text = (output / name).read_text("ascii")
        for secret in secrets:
            assert secret not in text, (name, secret)

    def strings(value):
        if isinstance(value, dict):
            for key, item in value.items():
                yield key
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, str):
            yield value

    for value in strings(manifest):
        assert not value.startswith("/"), value
        assert ".." not in value, value
        assert "\\" not in value, value


def test_extra_sms_are_named_like_the_1x_ones(tmp_path):
    manifest = compile_bundle(ONE, tmp_path / "extra", targets=(100, 80, 90), jobs=3)
    assert [e["target_sm"] for e in manifest["entries"]] == ["sm80", "sm90", "sm100"]
    assert [e["id"] for e in manifest["entries"]] == ["sm80.scale", "sm90.scale", "sm100.scale"]
    for entry in manifest["entries"]:
        assert entry["file"] == f"cubins/{entry['target_sm']}/scale.cubin"
        data = (tmp_path / "extra" / entry["file"]).read_bytes()
        assert bundle.cubin_sm(data, targets=(entry["target_sm"],)) == entry["target_sm"]
    assert bundle.inspect_bundle(tmp_path / "extra") == manifest["bundle_sha256"]


# --- bundle.cpp ---------------------------------------------------------------------------

# Looks every entry up through find_bundle_image and prints what the image says.
LOOKUP_MAIN = """\
#include "tensoracle/cubin_plugin.hpp"
#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
    using tensoracle::cubin::find_bundle_image;
    if (find_bundle_image(nullptr) != nullptr || find_bundle_image("sm86.nothing") != nullptr) {
        return 2;
    }
    for (int i = 1; i < argc; ++i) {
        auto const* image = find_bundle_image(argv[i]);
        if (image == nullptr) {
            return 3;
        }
        unsigned long digest = 0;
        for (std::size_t b = 0; b < image->size; ++b) {
            digest = digest * 31u + image->bytes[b];
        }
        std::printf("%s %zu %s %s %d %d %d %d %d %zu %lu", argv[i], image->size, image->sha256,
                    image->entry_symbol, image->target_sm, image->registers_per_thread,
                    image->dynamic_shared_bytes, image->global_scratch_bytes,
                    image->profile_scratch_bytes, image->public_argument_count, digest);
        for (std::size_t a = 0; a < image->public_argument_count; ++a) {
            std::printf(" %d:%u", static_cast<int>(image->argument_rules[a].kind),
                        static_cast<unsigned>(image->argument_rules[a].divisible_by));
        }
        std::printf("\\n");
    }
    return 0;
}
"""


def _compiler() -> str:
    compiler = shutil.which("g++") or shutil.which("c++")
    assert compiler is not None, "no C++ compiler on PATH (make apt installs g++)"
    return compiler


# The SDK header bundle.cpp is compiled against, with the TensorRT 11.1 and CUDA headers it
# includes (installed by `make tensorrt-11-headers`, and the PyPI CUDA wheel).
SDK_INCLUDE = REPO / "cpp" / "plugin" / "include"
TENSORRT_INCLUDE = REPO / "build" / "tensorrt-headers" / "11.1.0.106" / "include"


@pytest.fixture(scope="module")
def sdk_flags() -> list[str]:
    cuda = SITE / "nvidia" / "cu13" / "include"
    for header, target in (
        (TENSORRT_INCLUDE / "NvInfer.h", "tensorrt-11-headers"),
        (cuda / "cuda.h", "venv"),
    ):
        assert header.is_file(), f"{header} is missing (make {target})"
    return [f"-I{SDK_INCLUDE}", "-isystem", str(TENSORRT_INCLUDE), "-isystem", str(cuda)]


def test_bundle_cpp_text(built):
    output, manifest = built
    text = (output / "bundle.cpp").read_bytes().decode("ascii")
    lines = text.splitlines()
    assert lines[0].startswith("//")
    assert "generated" in lines[0].lower()
    assert "do not edit" in lines[0].lower()
    assert '#include "tensoracle/cubin_plugin.hpp"' in lines
    assert "#include <cstring>" in lines
    assert "#define TENSORACLE_EXPORT __declspec(dllexport)" in lines
    assert '#define TENSORACLE_EXPORT __attribute__((visibility("default")))' in lines
    digest = manifest["bundle_sha256"]
    assert (
        f'extern "C" TENSORACLE_EXPORT char const tensoracle_bundle_sha256[] = "{digest}";' in lines
    )
    positions = []
    for entry in manifest["entries"]:
        symbol = entry["embedded_symbol"]
        head = f'extern "C" alignas(16) TENSORACLE_EXPORT unsigned char const {symbol}[] = {{'
        start = lines.index(head)
        positions.append(start)
        end = lines.index("};", start)
        rows = lines[start + 1 : end]
        data = bytes(int(item, 16) for row in rows for item in row.strip().rstrip(",").split(","))
        assert data == (output / entry["file"]).read_bytes()
        assert all(len(row.strip().rstrip(",").split(",")) == 16 for row in rows[:-1])
        assert lines[end + 1] == (
            f'extern "C" TENSORACLE_EXPORT unsigned long long const {symbol}_size = '
            f"sizeof({symbol});"
        )
    assert positions == sorted(positions)
    namespace = lines.index("namespace {")
    assert namespace > positions[-1]
    assert lines[namespace + 2 : namespace + 6] == [
        "struct BundleEntry {",
        "    char const* id;",
        "    tensoracle::cubin::KernelImage image;",
        "};",
    ]
    table = lines.index("BundleEntry const entries[] = {")
    records = lines[table + 1 : table + 1 + len(manifest["entries"])]
    for entry, record in zip(manifest["entries"], records, strict=True):
        symbol, resources = entry["embedded_symbol"], entry["resources"]
        assert record == (
            f'    {{"{entry["id"]}", {{{symbol}, {symbol}_size, "{entry["sha256"]}", '
            f'"{entry["entry_symbol"]}", {entry["target_sm"][2:]}, '
            f"{resources['registers_per_thread']}, "
            f"{resources['launch_dynamic_shared_memory_bytes']}, 0, 0, "
            f"{len(entry['signature'])}, {symbol}_arguments}}}},"
        )
        rules = lines.index(f"tensoracle::cubin::ArgumentRule const {symbol}_arguments[] = {{")
        assert namespace < rules < table
    dot = "tensoracle_cubin_sm89_dot_specialized_arguments"
    start = lines.index(f"tensoracle::cubin::ArgumentRule const {dot}[] = {{")
    assert lines[start + 1 : start + 6] == [
        "    {tensoracle::cubin::ArgumentKind::kPointer, 16},",
        "    {tensoracle::cubin::ArgumentKind::kPointer, 16},",
        "    {tensoracle::cubin::ArgumentKind::kPointer, 16},",
        "    {tensoracle::cubin::ArgumentKind::kInt32, 8},",
        "};",
    ]
    assert "    {tensoracle::cubin::ArgumentKind::kFloat32, 1}," in lines
    assert "KernelImage const* find_bundle_image(char const* id) noexcept {" in lines
    assert "std::strcmp" in text
    assert lines[-1] == "} // namespace tensoracle::cubin"


def test_bundle_cpp_compiles_as_cxx17_against_the_sdk_header(built, sdk_flags):
    output, _ = built
    compilers = [_compiler()] + ([shutil.which("clang++")] if shutil.which("clang++") else [])
    for compiler in compilers:
        command = [compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
        subprocess.run([*command, *sdk_flags, str(output / "bundle.cpp")], check=True)


def test_bundle_cpp_links_and_finds_every_image(built, sdk_flags, tmp_path):
    output, manifest = built
    (tmp_path / "main.cpp").write_text(LOOKUP_MAIN)
    program = tmp_path / "lookup"
    subprocess.run(
        [
            _compiler(),
            "-std=c++17",
            "-O0",
            *sdk_flags,
            str(tmp_path / "main.cpp"),
            str(output / "bundle.cpp"),
            "-o",
            str(program),
        ],
        check=True,
    )
    ids = [entry["id"] for entry in manifest["entries"]]
    result = subprocess.run([str(program), *ids], capture_output=True, text=True, check=True)
    kinds = {"i32": 1, "fp32": 2}
    for entry, line in zip(manifest["entries"], result.stdout.splitlines(), strict=True):
        data = (output / entry["file"]).read_bytes()
        digest = 0
        for byte in data:
            digest = (digest * 31 + byte) % (1 << 64)
        rules = [
            f"{0 if arg['type'].startswith('*') else kinds[arg['type']]}:"
            f"{entry['specialization']['divisible_by'].get(arg['name'], 1)}"
            for arg in entry["signature"]
        ]
        resources = entry["resources"]
        expected = [
            entry["id"],
            str(len(data)),
            entry["sha256"],
            entry["entry_symbol"],
            entry["target_sm"][2:],
            str(resources["registers_per_thread"]),
            str(resources["launch_dynamic_shared_memory_bytes"]),
            "0",
            "0",
            str(len(entry["signature"])),
            str(digest),
            *rules,
        ]
        assert line.split() == expected


def test_a_library_of_bundle_cpp_passes_plugin_inspection(built, sdk_flags, tmp_path):
    output, manifest = built
    library = tmp_path / "libbundle.so"
    subprocess.run(
        [
            _compiler(),
            "-std=c++17",
            "-shared",
            "-fPIC",
            "-fvisibility=hidden",
            *sdk_flags,
            str(output / "bundle.cpp"),
            "-o",
            str(library),
        ],
        check=True,
    )
    assert bundle.inspect_bundle(output, plugin=library) == manifest["bundle_sha256"]


# --- the example bundles ------------------------------------------------------------------


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_examples_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_plugin_kernels_are_the_committed_bundle_s(tmp_path):
    kernels = _load(REPO / "examples" / "cubin_plugin" / "kernels.py").KERNELS
    assert [spec.name for spec in kernels] == ["bias_add", "scale", "row_dot_div16", "row_dot"]
    committed = REPO / "examples" / "cubin_plugin" / "bundle"
    manifest = json.loads((committed / "bundle.json").read_text())
    assert bundle.inspect_bundle(committed) == manifest["bundle_sha256"]
    rebuilt = compile_bundle(kernels, tmp_path / "plugin", targets=(80, 86, 89, 90, 100, 120))
    assert rebuilt == manifest
    assert _tree(tmp_path / "plugin") == _tree(committed)
