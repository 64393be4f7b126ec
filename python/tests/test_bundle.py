"""Tests for tensoracle.bundle: inspection of bundles, plugin libraries and wheels, tampering,
the generated bundle.cpp, and the native `tensoracle bundle inspect` command."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from cubin_support import INCLUDE, compile_library, example_bundle, example_library

from tensoracle import (
    BundleAbiError,
    BundleError,
    CorruptCubinError,
    FalseSmClaimError,
    MissingCubinError,
    PluginBundleMismatchError,
    inspect_bundle,
    inspect_wheel,
)


@pytest.fixture
def bundle_copy(tmp_path) -> Path:
    """A private copy of the example bundle that a test may tamper with."""
    return Path(shutil.copytree(example_bundle(), tmp_path / "bundle"))


def _manifest(bundle: Path) -> dict:
    return json.loads((bundle / "bundle.json").read_text())


def _write_manifest(bundle: Path, manifest: dict) -> None:
    (bundle / "bundle.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def test_intact_bundle_and_its_library_pass_every_check():
    bundle = example_bundle()
    report = inspect_bundle(bundle, plugin=example_library())
    manifest = _manifest(bundle)
    assert report.bundle_sha256 == hashlib.sha256((bundle / "bundle.json").read_bytes()).hexdigest()
    assert report.triton_version == manifest["producer"]["triton"]
    assert report.targets == (80, 86, 89, 90, 100, 120)
    assert len(report.cubins) == 6 * len(manifest["kernels"])
    arg_counts = {k["name"]: len(k["args"]) for k in manifest["kernels"]}
    for cubin in report.cubins:
        assert cubin.path == f"sm{cubin.sm}/{cubin.kernel}.cubin"
        assert cubin.params == arg_counts[cubin.kernel] + 2
        assert cubin.in_plugin is True
        assert cubin.sha256 == hashlib.sha256((bundle / cubin.path).read_bytes()).hexdigest()


def test_without_plugin_the_library_check_is_not_reported():
    report = inspect_bundle(example_bundle())
    assert report.plugin is None
    assert {c.in_plugin for c in report.cubins} == {None}


def test_flipped_byte_is_a_corrupt_cubin(bundle_copy):
    cubin = bundle_copy / "sm90" / "scale.cubin"
    data = bytearray(cubin.read_bytes())
    data[len(data) // 2] ^= 0xFF
    cubin.write_bytes(bytes(data))
    with pytest.raises(CorruptCubinError, match=r"sm90/scale\.cubin.*SHA-256"):
        inspect_bundle(bundle_copy)


def test_damaged_elf_header_is_a_corrupt_cubin(bundle_copy):
    cubin = bundle_copy / "sm86" / "bias_add.cubin"
    data = bytearray(cubin.read_bytes())
    data[18] = 62  # e_machine: x86-64 instead of CUDA
    cubin.write_bytes(bytes(data))
    with pytest.raises(CorruptCubinError, match="EM_CUDA"):
        inspect_bundle(bundle_copy)


def test_cubin_of_another_sm_in_a_directory_is_a_false_sm_claim(bundle_copy):
    manifest = _manifest(bundle_copy)
    imposter = (bundle_copy / "sm89" / "scale.cubin").read_bytes()
    (bundle_copy / "sm86" / "scale.cubin").write_bytes(imposter)
    for kernel in manifest["kernels"]:
        for cubin in kernel["cubins"]:
            if cubin["path"] == "sm86/scale.cubin":
                cubin["sha256"] = hashlib.sha256(imposter).hexdigest()
    _write_manifest(bundle_copy, manifest)
    with pytest.raises(FalseSmClaimError, match=r"sm86/scale\.cubin.*says sm89"):
        inspect_bundle(bundle_copy)


def test_relabelled_sm_directory_is_a_false_sm_claim(bundle_copy):
    (bundle_copy / "sm86").rename(bundle_copy / "sm87")
    manifest = _manifest(bundle_copy)
    manifest["targets"] = [87 if sm == 86 else sm for sm in manifest["targets"]]
    for kernel in manifest["kernels"]:
        for cubin in kernel["cubins"]:
            if cubin["sm"] == 86:
                cubin["sm"] = 87
                cubin["path"] = cubin["path"].replace("sm86/", "sm87/")
    _write_manifest(bundle_copy, manifest)
    with pytest.raises(FalseSmClaimError, match="says sm86"):
        inspect_bundle(bundle_copy)


def test_dropped_cubin_is_missing(bundle_copy):
    (bundle_copy / "sm120" / "row_dot.cubin").unlink()
    with pytest.raises(MissingCubinError, match=r"sm120/row_dot\.cubin"):
        inspect_bundle(bundle_copy)


def test_target_without_cubin_is_missing(bundle_copy):
    manifest = _manifest(bundle_copy)
    manifest["kernels"][0]["cubins"] = manifest["kernels"][0]["cubins"][:-1]
    _write_manifest(bundle_copy, manifest)
    with pytest.raises(MissingCubinError, match="no cubin for sm120"):
        inspect_bundle(bundle_copy)


def test_nonzero_scratch_in_the_manifest_is_an_abi_error(bundle_copy):
    manifest = _manifest(bundle_copy)
    manifest["kernels"][1]["global_scratch_bytes"] = 128
    _write_manifest(bundle_copy, manifest)
    with pytest.raises(BundleAbiError, match=r"'scale'.*global 128 B"):
        inspect_bundle(bundle_copy)


def test_parameter_count_differing_from_the_cubin_is_an_abi_error(bundle_copy):
    manifest = _manifest(bundle_copy)
    manifest["kernels"][1]["args"].append({"name": "extra", "type": "i32", "divisibility": 1})
    _write_manifest(bundle_copy, manifest)
    with pytest.raises(BundleAbiError, match=r"declares 6 parameters.*bundle\.json 7"):
        inspect_bundle(bundle_copy)


def test_malformed_manifest_names_the_field(bundle_copy):
    manifest = _manifest(bundle_copy)
    del manifest["kernels"][2]["function"]
    _write_manifest(bundle_copy, manifest)
    with pytest.raises(BundleError, match=r"/kernels/2/function is missing"):
        inspect_bundle(bundle_copy)


def test_library_of_another_bundle_is_a_plugin_mismatch(tmp_path):
    from cubin_support import example_kernels

    from tensoracle.producer import compile_bundle

    other = compile_bundle(example_kernels()[:2], tmp_path / "other", targets=[90])
    library = compile_library(other.directory / "bundle.cpp", tmp_path / "libother.so")
    with pytest.raises(PluginBundleMismatchError, match=other.sha256):
        inspect_bundle(example_bundle(), plugin=library)


def test_library_with_altered_cubin_bytes_is_a_plugin_mismatch(tmp_path):
    library = bytearray(example_library().read_bytes())
    cubin = (example_bundle() / "sm90" / "matmul_tf32.cubin").read_bytes()
    at = library.find(cubin)
    assert at >= 0
    library[at + len(cubin) // 2] ^= 0xFF
    altered = tmp_path / "libaltered.so"
    altered.write_bytes(bytes(library))
    with pytest.raises(PluginBundleMismatchError, match=r"sm90/matmul_tf32\.cubin"):
        inspect_bundle(example_bundle(), plugin=altered)


def test_library_without_a_bundle_is_a_plugin_mismatch(tmp_path):
    source = tmp_path / "empty.cpp"
    source.write_text("int tensoracle_nothing() { return 0; }\n")
    library = compile_library(source, tmp_path / "libempty.so")
    with pytest.raises(PluginBundleMismatchError, match="embeds no tensoracle cubin bundle"):
        inspect_bundle(example_bundle(), plugin=library)


def test_every_bundle_error_is_a_value_error():
    for error in (
        MissingCubinError,
        CorruptCubinError,
        FalseSmClaimError,
        PluginBundleMismatchError,
        BundleAbiError,
    ):
        assert issubclass(error, BundleError)
        assert issubclass(error, ValueError)
    assert len({MissingCubinError, CorruptCubinError, FalseSmClaimError}) == 3


PROBE = r"""
#include "tensoracle/cubin_bundle.hpp"
#include <cstdio>
#include <fstream>
#include <string>

int main(int, char** argv) {
    auto const& bundle = tensoracle::cubin::embedded_bundle();
    std::printf("%.*s\n", static_cast<int>(bundle.sha256.size()), bundle.sha256.data());
    for (auto const& kernel : bundle.kernels) {
        std::printf("kernel %.*s %.*s %u %u\n", (int)kernel.name.size(), kernel.name.data(),
                    (int)kernel.function.size(), kernel.function.data(), kernel.num_warps,
                    kernel.hidden_args);
        for (auto const& arg : kernel.args) {
            std::printf("arg %.*s %.*s %d %u\n", (int)arg.name.size(), arg.name.data(),
                        (int)arg.triton_type.size(), arg.triton_type.data(),
                        static_cast<int>(arg.type), arg.divisibility);
        }
        for (auto const& image : kernel.images) {
            std::string const path = std::string{argv[1]} + "/" + std::string{kernel.name} +
                                     "." + std::to_string(image.sm);
            std::ofstream(path, std::ios::binary)
                .write(reinterpret_cast<char const*>(image.bytes.data()),
                       static_cast<std::streamsize>(image.bytes.size()));
            std::printf("image %u %.*s %u\n", image.sm, (int)image.sha256.size(),
                        image.sha256.data(), image.shared_bytes);
        }
    }
}
"""


def test_generated_bundle_cpp_embeds_exactly_the_manifest(tmp_path):
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler on PATH")
    bundle = example_bundle()
    (tmp_path / "probe.cpp").write_text(PROBE)
    probe = tmp_path / "probe"
    subprocess.run(
        [
            compiler,
            "-std=c++20",
            f"-I{INCLUDE}",
            str(tmp_path / "probe.cpp"),
            str(bundle / "bundle.cpp"),
            "-o",
            str(probe),
        ],
        check=True,
    )
    images = tmp_path / "images"
    images.mkdir()
    lines = subprocess.run(
        [str(probe), str(images)], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    manifest = _manifest(bundle)
    kinds = {"i32": 1, "i64": 2, "fp32": 3, "fp64": 4}
    expected = [hashlib.sha256((bundle / "bundle.json").read_bytes()).hexdigest()]
    for kernel in manifest["kernels"]:
        expected.append(f"kernel {kernel['name']} {kernel['function']} {kernel['num_warps']} 2")
        for arg in kernel["args"]:
            kind = 0 if arg["type"].startswith("*") else kinds[arg["type"]]
            expected.append(f"arg {arg['name']} {arg['type']} {kind} {arg['divisibility']}")
        for cubin in kernel["cubins"]:
            expected.append(f"image {cubin['sm']} {cubin['sha256']} {cubin['shared_bytes']}")
            embedded = (images / f"{kernel['name']}.{cubin['sm']}").read_bytes()
            assert embedded == (bundle / cubin["path"]).read_bytes()
    assert lines == expected


def _wheel(path: Path, bundle: Path, library: Path) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        for file in sorted(bundle.rglob("*")):
            if file.is_file():
                wheel.write(file, f"my_model/bundle/{file.relative_to(bundle).as_posix()}")
        wheel.write(library, "my_model/libmy_model_plugin.so")
        wheel.writestr("my_model/__init__.py", "")
    return path


def test_wheel_is_inspected_without_installing(tmp_path):
    wheel = _wheel(tmp_path / "my_model-1.0-py3-none-any.whl", example_bundle(), example_library())
    report = inspect_wheel(wheel, plugin="my_model/libmy_model_plugin.so")
    assert report.directory == f"{wheel}!/my_model/bundle"
    assert all(c.in_plugin for c in report.cubins)


def test_wheel_with_a_foreign_library_or_none_is_a_plugin_mismatch(tmp_path):
    source = tmp_path / "empty.cpp"
    source.write_text("int tensoracle_nothing() { return 0; }\n")
    foreign = compile_library(source, tmp_path / "libempty.so")
    wheel = _wheel(tmp_path / "w-1.0-py3-none-any.whl", example_bundle(), foreign)
    with pytest.raises(PluginBundleMismatchError, match=r"whl!/my_model/libmy_model_plugin\.so"):
        inspect_wheel(wheel, plugin="my_model/libmy_model_plugin.so")
    with pytest.raises(PluginBundleMismatchError, match=r"no member 'my_model/absent\.so'"):
        inspect_wheel(wheel, plugin="my_model/absent.so")


def test_wheel_with_a_damaged_cubin_names_the_wheel_member(tmp_path, bundle_copy):
    cubin = bundle_copy / "sm89" / "scale.cubin"
    data = bytearray(cubin.read_bytes())
    data[-9] ^= 0x01
    cubin.write_bytes(bytes(data))
    wheel = _wheel(tmp_path / "w-1.0-py3-none-any.whl", bundle_copy, example_library())
    with pytest.raises(CorruptCubinError, match=r"whl!/my_model/bundle/sm89/scale\.cubin"):
        inspect_wheel(wheel, plugin="my_model/libmy_model_plugin.so")


def _cli() -> str:
    found = shutil.which("tensoracle", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("the native tensoracle command is not installed next to this Python")
    return found


def test_cli_reports_json_and_exit_codes(bundle_copy):
    cli = _cli()
    ok = subprocess.run(
        [cli, "bundle", "inspect", str(example_bundle()), "--plugin", str(example_library())],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    report = json.loads(ok.stdout)
    assert report["ok"] is True
    assert all(c["in_plugin"] for c in report["cubins"])

    (bundle_copy / "sm80" / "scale.cubin").unlink()
    failed = subprocess.run(
        [cli, "bundle", "inspect", str(bundle_copy)], capture_output=True, text=True, check=False
    )
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["error"] == "MissingCubinError"

    misuse = subprocess.run([cli, "bundle", "inspect"], capture_output=True, text=True, check=False)
    assert misuse.returncode == 2
