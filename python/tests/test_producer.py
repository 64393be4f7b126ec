"""Tests for tensoracle.producer: bundle contents, reproducibility, tools, ABI and spec checks."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import socket
import stat
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from cubin_support import EXAMPLES, example_bundle, example_kernels, require_producer_tools

from tensoracle.errors import BundleAbiError, ProducerToolError

producer = pytest.importorskip("tensoracle.producer")


def _wrapper(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _scale_only():
    return [spec for spec in example_kernels() if spec.name == "scale"]


def test_bundle_holds_one_cubin_per_kernel_and_target_with_matching_digests():
    bundle = example_bundle()
    manifest = json.loads((bundle / "bundle.json").read_text())
    assert manifest["targets"] == [80, 86, 89, 90, 100, 120]
    assert manifest["producer"]["triton"] == "3.8.0"
    assert manifest["producer"]["ptxas"].startswith("13.2.")
    assert [k["name"] for k in manifest["kernels"]] == [s.name for s in example_kernels()]
    for kernel in manifest["kernels"]:
        assert [c["sm"] for c in kernel["cubins"]] == manifest["targets"]
        assert kernel["hidden_args"] == ["global_scratch", "profile_scratch"]
        assert kernel["global_scratch_bytes"] == kernel["profile_scratch_bytes"] == 0
        for cubin in kernel["cubins"]:
            blob = (bundle / cubin["path"]).read_bytes()
            assert cubin["path"] == f"sm{cubin['sm']}/{kernel['name']}.cubin"
            assert hashlib.sha256(blob).hexdigest() == cubin["sha256"]
            assert cubin["bytes"] == len(blob)
    files = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    listed = sorted(c["path"] for k in manifest["kernels"] for c in k["cubins"])
    assert files == sorted([*listed, "bundle.cpp", "bundle.json"])


def test_manifest_records_argument_abi_and_source_digests():
    manifest = json.loads((example_bundle() / "bundle.json").read_text())
    by_name = {k["name"]: k for k in manifest["kernels"]}
    specialised, general = by_name["row_dot_div16"], by_name["row_dot"]
    assert [(a["name"], a["type"], a["divisibility"]) for a in specialised["args"]] == [
        ("a_ptr", "*fp32", 16),
        ("b_ptr", "*fp32", 16),
        ("out_ptr", "*fp32", 16),
        ("k", "i32", 16),
    ]
    assert {a["divisibility"] for a in general["args"]} == {1}
    assert specialised["source_sha256"] == general["source_sha256"]
    assert specialised["cubins"][0]["sha256"] != general["cubins"][0]["sha256"]
    assert by_name["matmul_tf32"]["constants"]["PRECISION"] == "tf32"
    source = by_name["scale"]["source_sha256"]
    assert source == hashlib.sha256(example_kernels()[1].fn.src.encode()).hexdigest()


def test_manifest_names_no_host_or_path():
    text = (example_bundle() / "bundle.json").read_text()
    for secret in (socket.gethostname(), str(example_bundle()), str(Path.home()), str(EXAMPLES)):
        assert secret not in text

    def strings(value):
        if isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, str):
            yield value

    for value in strings(json.loads(text)):
        assert not value.startswith("/"), value
        assert ".." not in value, value


def test_serial_and_parallel_builds_give_byte_identical_bundles(tmp_path):
    # The example bundle is built with jobs=2; this build compiles every pair in this process.
    again = producer.compile_bundle(example_kernels(), tmp_path / "again", jobs=1).directory
    first = example_bundle()
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (again / name).read_bytes(), name


def test_explicit_tools_override_the_wheel_defaults_independently(tmp_path):
    require_producer_tools()
    real_ptxas = producer.find_tool("ptxas")
    real_cuobjdump = producer.find_tool("cuobjdump")
    log = tmp_path / "calls.log"
    ptxas = _wrapper(tmp_path / "ptxas", f'echo ptxas >> "{log}"\nexec "{real_ptxas}" "$@"\n')
    cuobjdump = _wrapper(
        tmp_path / "cuobjdump", f'echo cuobjdump >> "{log}"\nexec "{real_cuobjdump}" "$@"\n'
    )
    producer.compile_bundle(_scale_only(), tmp_path / "a", targets=[86], ptxas=ptxas)
    calls = log.read_text().split()
    assert "ptxas" in calls
    assert "cuobjdump" not in calls
    log.unlink()
    producer.compile_bundle(_scale_only(), tmp_path / "b", targets=[86], cuobjdump=cuobjdump)
    assert set(log.read_text().split()) == {"cuobjdump"}


def test_missing_tool_names_package_path_and_fix(tmp_path):
    absent = tmp_path / "nowhere" / "ptxas"
    with pytest.raises(ProducerToolError) as raised:
        producer.compile_bundle(_scale_only(), tmp_path / "out", ptxas=absent)
    message = str(raised.value)
    assert str(absent) in message
    assert "nvidia-cuda-nvcc" in message
    assert "tensoracle[producer]" in message
    assert not (tmp_path / "out").exists()
    with pytest.raises(ProducerToolError, match="nvidia-cuda-cuobjdump"):
        producer.compile_bundle(_scale_only(), tmp_path / "out", cuobjdump=tmp_path / "none")


def test_missing_wheel_names_the_default_path(monkeypatch, tmp_path):
    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", absent)
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"purelib": str(tmp_path)})
    with pytest.raises(ProducerToolError) as raised:
        producer.find_tool("cuobjdump")
    expected = tmp_path / "nvidia" / "cu13" / "bin" / "cuobjdump"
    assert str(expected) in str(raised.value)
    assert "nvidia-cuda-cuobjdump" in str(raised.value)


def test_ptxas_outside_13_2_to_14_is_refused(tmp_path):
    old = _wrapper(tmp_path / "ptxas", "echo 'Cuda compilation tools, release 12.9, V12.9.86'\n")
    with pytest.raises(ProducerToolError, match=r"12\.9\.86"):
        producer.compile_bundle(_scale_only(), tmp_path / "out", ptxas=old)


def test_scratch_requirement_is_rejected_with_the_kernel_name(tmp_path):
    source = tmp_path / "descriptor_kernel.py"
    source.write_text(
        textwrap.dedent(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_desc(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                desc = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
                value = desc.load([tl.program_id(0) * BLOCK])
                tl.store(y_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), value)
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        from descriptor_kernel import copy_desc
    finally:
        sys.path.remove(str(tmp_path))
    spec = producer.KernelSpec(
        name="tma_copy",
        fn=copy_desc,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32"},
        constants={"BLOCK": 64},
        divisibility={"x_ptr": 16},
    )
    with pytest.raises(BundleAbiError, match=r"'tma_copy'.*scratch"):
        producer.compile_bundle([spec], tmp_path / "out", targets=[90])
    assert not (tmp_path / "out").exists()


def test_unexpected_parameter_abi_is_rejected_with_the_kernel_name():
    spec = _scale_only()[0]
    ptx = ".visible .entry scale(\n.param .u64 a,\n.param .u64 b,\n.param .u32 c,\n.param .f32 d\n)"
    with pytest.raises(BundleAbiError, match=r"'scale'.*parameter ABI"):
        producer._check_ptx_abi(spec, "scale", ptx, 90)


def test_unsupported_argument_type_is_rejected_with_the_kernel_name(tmp_path):
    spec = _scale_only()[0]
    bad = producer.KernelSpec(
        name="scale16",
        fn=spec.fn,
        signature={**spec.signature, "alpha": "fp16"},
        constants=spec.constants,
    )
    with pytest.raises(BundleAbiError, match=r"'scale16'.*'alpha'.*fp16"):
        producer.compile_bundle([bad], tmp_path / "out")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"constants": {}}, "constexpr parameter 'BLOCK' has no constant"),
        ({"signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}}, "'alpha'"),
        (
            {"signature": {"out_ptr": "*fp32", "x_ptr": "*fp32", "n": "i32", "alpha": "fp32"}},
            "order",
        ),
        ({"divisibility": {"n": 8}}, "divisibility of 'n' is 8"),
        ({"divisibility": {"alpha": 16}}, "float argument 'alpha'"),
        ({"name": "not-an-identifier"}, "C identifier"),
    ],
)
def test_kernel_spec_mismatches_name_the_kernel_and_field(tmp_path, change, message):
    spec = _scale_only()[0]
    fields = {
        "name": spec.name,
        "fn": spec.fn,
        "signature": spec.signature,
        "constants": spec.constants,
        "divisibility": {},
    }
    fields.update(change)
    with pytest.raises(ValueError, match=message):
        producer.compile_bundle([producer.KernelSpec(**fields)], tmp_path / "out")


def test_existing_output_is_kept_unless_overwrite(tmp_path):
    out = tmp_path / "bundle"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        producer.compile_bundle(_scale_only(), out, targets=[86])
    assert (out / "keep.txt").read_text() == "mine"
    producer.compile_bundle(_scale_only(), out, targets=[86], overwrite=True)
    assert not (out / "keep.txt").exists()
    assert (out / "sm86" / "scale.cubin").is_file()


def test_production_runs_with_torch_blocked_and_plain_import_skips_triton(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys

        class BlockTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError("torch is blocked in this test")
                return None

        sys.meta_path.insert(0, BlockTorch())
        import tensoracle
        assert "triton" not in sys.modules and "tensoracle.producer" not in sys.modules
        sys.path.insert(0, {str(EXAMPLES)!r})
        from kernels import KERNELS
        from tensoracle.producer import compile_bundle
        compile_bundle(KERNELS, {str(tmp_path / "out")!r}, targets=[89])
        assert "torch" not in sys.modules
        print("produced without torch")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "produced without torch" in result.stdout
    assert (tmp_path / "out" / "sm89" / "matmul_tf32.cubin").is_file()


def _broken_kernel(tmp_path: Path):
    source = tmp_path / "broken_kernel.py"
    source.write_text(
        textwrap.dedent(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def broken(x_ptr, n, BLOCK: tl.constexpr):
                offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offsets, no_such_name(offsets), mask=offsets < n)
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        from broken_kernel import broken
    finally:
        sys.path.remove(str(tmp_path))
    return producer.KernelSpec(
        name="broken", fn=broken, signature={"x_ptr": "*fp32", "n": "i32"}, constants={"BLOCK": 64}
    )


@pytest.mark.parametrize("jobs", [1, 3])
def test_failing_kernel_is_reported_with_name_and_first_target(tmp_path, jobs):
    from tensoracle import KernelCompileError

    kernels = [*_scale_only(), _broken_kernel(tmp_path)]
    out = tmp_path / "out"
    with pytest.raises(KernelCompileError) as raised:
        producer.compile_bundle(kernels, out, targets=[90, 86], jobs=jobs)
    message = str(raised.value)
    # The pairs fail on both SMs; the first in build order (sorted targets) is the one reported.
    assert message.startswith("kernel 'broken' (sm86): Triton failed to compile it:")
    assert "no_such_name" in message
    assert not out.exists()
    assert not list(tmp_path.glob(".out.*")), "the staging directory was left behind"


@pytest.mark.parametrize("jobs", [0, -2, 1.5, True, "2"])
def test_jobs_must_be_a_positive_integer(tmp_path, jobs):
    with pytest.raises(ValueError, match=rf"jobs must be a positive integer.*got {jobs!r}"):
        producer.compile_bundle(_scale_only(), tmp_path / "out", targets=[86], jobs=jobs)
    assert not (tmp_path / "out").exists()
