"""tensoracle.bundle against the 1.x bundle format: every inspection rule and its order, the
digest, cubin_sm, the plugin checks on real ELF libraries, wheels, and the native
`tensoracle bundle inspect` command. Bundles are made from ptxas cubins (bundle_fixtures)."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bundle_fixtures as fx
import pytest
from cache_cli import tensoracle_executable
from hypothesis import given, settings
from hypothesis import strategies as st

import tensoracle
import tensoracle.bundle.inspection as bundle_module
from tensoracle import errors
from tensoracle.bundle import (
    BundleError,
    CorruptCubinError,
    CubinArchitectureError,
    MissingCubinError,
    PluginBundleMismatchError,
    bundle_sha256,
    cubin_sm,
    inspect_bundle,
    inspect_bundle_report,
    inspect_wheel,
)


@pytest.fixture
def bundle(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "bundle"
    root.mkdir()
    return root, fx.make_bundle(root)


# --- names and classes -------------------------------------------------------------------------


def test_the_module_exports_exactly_the_1x_names():
    import tensoracle.bundle as public

    assert sorted(public.__all__) == sorted(
        [
            "inspect_bundle",
            "inspect_wheel",
            "bundle_sha256",
            "cubin_sm",
            "BundleError",
            "MissingCubinError",
            "CorruptCubinError",
            "CubinArchitectureError",
            "PluginBundleMismatchError",
        ]
    )
    for name in public.__all__:
        assert getattr(public, name) is not None


def test_error_classes_have_the_1x_bases_and_the_old_name_is_an_alias():
    assert issubclass(BundleError, ValueError)
    for cls in (MissingCubinError, CorruptCubinError, CubinArchitectureError):
        assert cls.__bases__ == (BundleError,)
    assert PluginBundleMismatchError.__bases__ == (BundleError,)
    assert errors.BundleAbiError.__bases__ == (BundleError,)
    assert errors.CubinArchitectureError is CubinArchitectureError
    assert errors.FalseSmClaimError is CubinArchitectureError
    assert tensoracle.FalseSmClaimError is CubinArchitectureError
    assert tensoracle.CubinArchitectureError is CubinArchitectureError
    assert not hasattr(tensoracle, "BundleReport")


def test_importing_the_module_loads_no_tensorrt_triton_torch_or_gpu_library():
    code = (
        "import sys, tensoracle.bundle\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('tensorrt', 'tensorrt_rtx', 'triton', 'torch', 'cuda', 'pycuda', 'cupy')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# --- an intact bundle --------------------------------------------------------------------------


def test_an_intact_bundle_returns_its_digest(bundle):
    root, manifest = bundle
    result = inspect_bundle(root)
    assert isinstance(result, str)
    assert result == manifest["bundle_sha256"] == fx.digest(manifest)


def test_the_digest_is_verified_only_when_recorded(bundle):
    root, manifest = bundle
    del manifest["bundle_sha256"]
    fx.write_manifest(root, manifest, sign=False)
    assert inspect_bundle(root) == fx.digest(manifest)


def test_the_detailed_report_describes_every_entry(bundle, tmp_path):
    root, manifest = bundle
    library = fx.build_plugin(tmp_path / "libplugin.so", manifest, root)
    report = inspect_bundle_report(root, plugin=library)
    assert report["ok"] is True
    assert report["bundle_sha256"] == manifest["bundle_sha256"]
    assert report["producer"] == {"triton": "3.8.0", "ptxas": "13.2.86"}
    assert report["plugin"] == str(library)
    assert len(report["entries"]) == 6
    first = report["entries"][0]
    assert first["id"] == "sm86.scale"
    assert first["kernel"] == "scale"
    assert first["target_sm"] == "sm86"
    assert first["file"] == "cubins/sm86/scale.cubin"
    assert first["bytes"] == len(fx.cubin("scale", 86))
    assert first["sha256"] == hashlib.sha256(fx.cubin("scale", 86)).hexdigest()
    assert first["params"] == 5
    assert first["registers_per_thread"] == 2
    assert first["launch_dynamic_shared_memory_bytes"] == 0
    assert first["signature"][0] == {"name": "x", "type": "*fp32", "divisibility": 16}
    assert all(e["in_plugin"] is True for e in report["entries"])
    assert inspect_bundle_report(root)["entries"][0]["in_plugin"] is None


# Windows has no O_NOFOLLOW, O_NONBLOCK or O_CLOEXEC: the JSON pre-check takes another branch
# there, which these tests also run here, with sys.platform and the os module as Windows has them.
PLATFORMS = ["linux", "win32"]
NOT_ON_WINDOWS = ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC")


def as_platform(monkeypatch: pytest.MonkeyPatch, platform: str) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    if platform == "win32":
        for name in NOT_ON_WINDOWS:
            monkeypatch.delattr(os, name)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_missing_manifest_is_file_not_found_and_bad_json_a_decode_error(
    tmp_path, monkeypatch, platform
):
    as_platform(monkeypatch, platform)
    with pytest.raises(FileNotFoundError):
        inspect_bundle(tmp_path)
    (tmp_path / "bundle.json").write_text('{"schema_version": 1,')
    with pytest.raises(json.JSONDecodeError):
        inspect_bundle(tmp_path)
    (tmp_path / "bundle.json").write_bytes(b'{"a": "\xff"}')
    with pytest.raises(json.JSONDecodeError):
        inspect_bundle(tmp_path)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_manifest_that_is_a_link_is_left_to_the_core(tmp_path, monkeypatch, platform):
    (tmp_path / "elsewhere.json").write_text('{"schema_version": 1,')
    (tmp_path / "bundle.json").symlink_to(tmp_path / "elsewhere.json")
    as_platform(monkeypatch, platform)
    assert bundle_module._open_manifest(tmp_path / "bundle.json") is None
    # Not the pre-check's JSONDecodeError: the core's own verdict, naming the manifest.
    with pytest.raises(BundleError, match=r"bundle\.json' is not JSON"):
        inspect_bundle(tmp_path)


def test_on_windows_a_manifest_replaced_after_it_was_looked_at_is_not_read(tmp_path, monkeypatch):
    manifest = tmp_path / "bundle.json"
    manifest.write_text('{"schema_version": 1,')
    other = tmp_path / "other.json"
    other.write_text("{}")
    looked_at = os.lstat
    # What lstat saw is another file than the one then opened, as when a link is swapped in.
    monkeypatch.setattr(
        os, "lstat", lambda path: looked_at(other if Path(path) == manifest else path)
    )
    as_platform(monkeypatch, "win32")
    assert bundle_module._open_manifest(manifest) is None
    monkeypatch.setattr(os, "lstat", looked_at)
    descriptor = bundle_module._open_manifest(manifest)
    assert descriptor is not None
    with os.fdopen(descriptor, "rb") as file:
        assert file.read() == b'{"schema_version": 1,'


# --- the rules of section 3.3, one by one ------------------------------------------------------

Change = Callable[[dict[str, Any]], None]


def _entry(change: Callable[[dict[str, Any]], None]) -> Change:
    return lambda manifest: change(manifest["entries"][0])


def _set(path: str, value: Any) -> Change:
    def change(manifest: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = manifest["entries"][0]
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value

    return change


def _delete(key: str) -> Change:
    return _entry(lambda e: e.pop(key))


RULES: list[tuple[str, Change, type[BundleError], str]] = [
    ("top level not an object", lambda m: m.clear(), BundleError, "schema_version"),
    ("schema_version 2", lambda m: m.update(schema_version=2), BundleError, "schema_version is 2"),
    ("no entries", lambda m: m.pop("entries"), BundleError, "entries is missing"),
    ("empty entries", lambda m: m.update(entries=[]), BundleError, "entries is []"),
    ("entries not a list", lambda m: m.update(entries={}), BundleError, "entries is {}"),
    ("entry not an object", lambda m: m["entries"].__setitem__(0, 3), BundleError, "entry object"),
    ("target_sm", _set("target_sm", "sm75"), BundleError, 'entries[0].target_sm is "sm75"'),
    ("hidden", _set("hidden_trailing_parameters", []), BundleError, "hidden_trailing_parameters"),
    ("resources", _set("resources", None), BundleError, "entries[0].resources is null"),
    ("scratch", _set("resources.global_scratch_bytes", 1), BundleError, "scratch"),
    ("sizes", _set("resources.registers_per_thread", 0), BundleError, "registers_per_thread"),
    ("bool size", _set("resources.compiled_shared_memory_bytes", True), BundleError, "true"),
    ("entry_symbol", _set("entry_symbol", ""), BundleError, "entry_symbol"),
    ("signature", _set("signature", {}), BundleError, "entries[0].signature is {}"),
    ("argument count", _set("signature", []), BundleError, "arguments"),
    ("argument type", _set("signature.0.type", "*bf16"), BundleError, "argument types"),
    ("argument names", _set("signature.1.name", "x"), BundleError, "argument"),
    ("specialization keys", _set("specialization", {}), BundleError, "specialization"),
    ("divisor", _set("specialization.divisible_by.x", 24), BundleError, "specialization"),
    ("fp32 divisor", _set("specialization.divisible_by.alpha", 2), BundleError, "specialization"),
    ("unknown name", _set("specialization.divisible_by.y", 2), BundleError, "specialization"),
    ("unsafe file", _set("file", "../x.cubin"), BundleError, "invalid cubin path"),
    (
        "duplicate file",
        lambda m: m["entries"][1].update(file=m["entries"][0]["file"]),
        BundleError,
        "duplicate file",
    ),
    ("absent file", _set("file", "cubins/none.cubin"), MissingCubinError, "does not exist"),
    ("length", _set("bytes", 12), CorruptCubinError, "expected 12"),
    ("sha256", _set("sha256", "0" * 64), CorruptCubinError, "expected " + "0" * 64),
    ("architecture", _set("target_sm", "sm89"), CubinArchitectureError, "sm86, expected sm89"),
]


@pytest.mark.parametrize(
    ("change", "error", "words"), [r[1:] for r in RULES], ids=[r[0] for r in RULES]
)
def test_each_rule_raises_its_class_naming_the_field(bundle, change, error, words):
    root, manifest = bundle
    change(manifest)
    fx.write_manifest(root, manifest)
    with pytest.raises(error) as raised:
        inspect_bundle(root)
    assert words in str(raised.value)
    if error is BundleError:
        assert type(raised.value) in (BundleError, errors.BundleAbiError)


@pytest.mark.parametrize(
    "path",
    [
        "/x",
        "../x",
        "a/../../x",
        "C:x",
        "C:/x",
        "C:\\x",
        "\\x",
        "\\\\srv\\share\\x",
        "//srv/share/x",
        "a\\..\\x",
    ],
)
def test_every_unsafe_path_form_is_an_invalid_cubin_path(bundle, path):
    root, manifest = bundle
    manifest["entries"][0]["file"] = path
    fx.write_manifest(root, manifest)
    with pytest.raises(BundleError, match="invalid cubin path"):
        inspect_bundle(root)


def test_a_wrong_recorded_digest_is_refused_before_any_entry(bundle):
    root, manifest = bundle
    manifest["entries"][0]["target_sm"] = "sm75"
    manifest["bundle_sha256"] = "1" * 64
    fx.write_manifest(root, manifest, sign=False)
    with pytest.raises(BundleError, match="bundle_sha256"):
        inspect_bundle(root)


ORDER: list[tuple[str, Change, Change, str]] = [
    (
        "target before hidden",
        _set("target_sm", "sm75"),
        _set("hidden_trailing_parameters", []),
        "target_sm",
    ),
    ("resources object before sizes", _set("resources", []), _set("entry_symbol", ""), "resources"),
    (
        "scratch before sizes",
        _set("resources.profile_scratch_bytes", 4),
        _set("resources.registers_per_thread", 0),
        "scratch",
    ),
    (
        "symbol before arguments",
        _set("entry_symbol", 3),
        _set("signature.0.type", "i64"),
        "entry_symbol",
    ),
    (
        "arguments before specialization",
        _set("signature.0.type", "i64"),
        _set("specialization", []),
        "signature[0].type",
    ),
    (
        "specialization before file",
        _set("specialization", []),
        _set("file", "/x"),
        "specialization",
    ),
    ("file rule before existence", _set("file", "/x"), _set("bytes", 1), "invalid cubin path"),
    ("absent before length", _set("file", "cubins/none.cubin"), _set("bytes", 1), "does not exist"),
    ("length before digest", _set("bytes", 1), _set("sha256", "0" * 64), "expected 1"),
]


@pytest.mark.parametrize(
    ("first", "second", "words"), [r[1:] for r in ORDER], ids=[r[0] for r in ORDER]
)
def test_with_two_problems_the_earlier_rule_is_raised(bundle, first, second, words):
    root, manifest = bundle
    first(manifest)
    second(manifest)
    fx.write_manifest(root, manifest)
    with pytest.raises(BundleError) as raised:
        inspect_bundle(root)
    assert words in str(raised.value)


def test_entries_are_checked_one_after_the_other(bundle):
    root, manifest = bundle
    (root / manifest["entries"][0]["file"]).unlink()
    manifest["entries"][1]["target_sm"] = "sm75"
    fx.write_manifest(root, manifest)
    with pytest.raises(MissingCubinError, match="entry 0"):
        inspect_bundle(root)


def test_unknown_keys_are_ignored_but_are_part_of_the_digest(bundle):
    root, manifest = bundle
    before = manifest["bundle_sha256"]
    manifest["entries"][0]["note"] = "ünïcödé"
    manifest["extra"] = {"z": [1, 2]}
    manifest = fx.write_manifest(root, manifest)
    assert inspect_bundle(root) == manifest["bundle_sha256"] != before


def test_a_kernel_missing_from_its_cubin_is_a_corrupt_cubin(bundle):
    root, manifest = bundle
    manifest["entries"][0]["entry_symbol"] = "gemm"
    fx.write_manifest(root, manifest)
    with pytest.raises(CorruptCubinError, match="'gemm'"):
        inspect_bundle(root)


# --- the plugin library ------------------------------------------------------------------------


def test_a_matching_plugin_passes(bundle, tmp_path):
    root, manifest = bundle
    library = fx.build_plugin(tmp_path / "libok.so", manifest, root)
    assert inspect_bundle(root, plugin=library) == manifest["bundle_sha256"]


def test_a_plugin_with_another_digest_is_refused(bundle, tmp_path):
    root, manifest = bundle
    library = fx.build_plugin(tmp_path / "libother.so", manifest, root, identity="e" * 64)
    with pytest.raises(PluginBundleMismatchError, match=r"e{64}"):
        inspect_bundle(root, plugin=library)


def test_an_unreadable_or_absent_library_is_a_mismatch(bundle, tmp_path):
    root, _ = bundle
    with pytest.raises(PluginBundleMismatchError, match="does not exist"):
        inspect_bundle(root, plugin=tmp_path / "absent.so")
    (tmp_path / "text.so").write_text("no ELF")
    with pytest.raises(PluginBundleMismatchError, match="identity"):
        inspect_bundle(root, plugin=tmp_path / "text.so")


def test_an_embedded_cubin_must_exist_with_the_cubins_size_and_bytes(bundle, tmp_path):
    root, manifest = bundle
    without = copy.deepcopy(manifest)
    without["entries"] = manifest["entries"][1:]
    library = fx.build_plugin(
        tmp_path / "libmissing.so", without, root, identity=manifest["bundle_sha256"]
    )
    with pytest.raises(PluginBundleMismatchError, match="embedded cubin"):
        inspect_bundle(root, plugin=library)
    # Another kernel's bytes under this symbol: another size.
    swapped = copy.deepcopy(manifest)
    swapped["entries"][0]["file"] = manifest["entries"][1]["file"]
    library = fx.build_plugin(tmp_path / "libswapped.so", swapped, root)
    with pytest.raises(PluginBundleMismatchError, match=r"embedded cubin.*bytes"):
        inspect_bundle(root, plugin=library)


def test_an_embedded_cubin_of_the_right_size_but_other_bytes_is_refused(bundle, tmp_path):
    root, manifest = bundle
    target = manifest["entries"][2]["embedded_symbol"]
    data = bytearray((root / manifest["entries"][2]["file"]).read_bytes())
    data[-1] ^= 1
    cubins = {e["embedded_symbol"]: (root / e["file"]).read_bytes() for e in manifest["entries"]}
    cubins[target] = bytes(data)
    source = tmp_path / "libflip.cpp"
    source.write_text(fx.plugin_source(manifest["bundle_sha256"], cubins))
    library = tmp_path / "libflip.so"
    subprocess.run(["g++", "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    with pytest.raises(PluginBundleMismatchError, match=f"embedded cubin '{target}'.*other bytes"):
        inspect_bundle(root, plugin=library)


def test_entries_without_embedded_symbol_are_not_looked_for(bundle, tmp_path):
    root, manifest = bundle
    for e in manifest["entries"]:
        e.pop("embedded_symbol")
    manifest = fx.write_manifest(root, manifest)
    library = fx.build_plugin(tmp_path / "libdigest.so", manifest, root)
    assert inspect_bundle(root, plugin=library) == manifest["bundle_sha256"]


# --- the digest --------------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)
_values = st.recursive(
    st.none() | st.booleans() | _ints | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_text, _values, max_size=6), st.booleans())
def test_the_core_digest_equals_pythons_canonical_json(manifest, recorded):
    if recorded:
        manifest["bundle_sha256"] = "x" * 64
    body = {k: v for k, v in manifest.items() if k != "bundle_sha256"}
    expected = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    ).hexdigest()
    assert bundle_sha256(manifest) == expected


def test_the_digest_handles_the_characters_python_escapes():
    manifest = {
        "\x7f": "\x00\x1f\u2028\U0001f600",
        "é": ['\b\f\n\r\t"\\/'],
        "z": {"b": 2**64 - 1, "a": -(2**63)},
        "A": True,
    }
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert bundle_sha256(manifest) == hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize("value", [1.5, 1.0, 2**64, -(2**63) - 1, float("nan")])
def test_values_without_a_matching_spelling_are_refused(value):
    with pytest.raises(BundleError):
        bundle_sha256({"entries": [value]})


# --- cubin_sm ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sm", [86, 89, 120])
def test_cubin_sm_reads_the_1x_targets(sm):
    assert cubin_sm(fx.cubin("scale", sm)) == f"sm{sm}"


@pytest.mark.parametrize("sm", [80, 90, 100])
def test_our_extra_targets_need_to_be_asked_for(sm):
    data = fx.cubin("scale", sm)
    with pytest.raises(CubinArchitectureError, match=f"sm{sm}"):
        cubin_sm(data)
    assert cubin_sm(data, targets=("sm80", "sm90", "sm100")) == f"sm{sm}"
    assert cubin_sm(fx.cubin("scale", 86), targets=["sm86"]) == "sm86"


def _header(abi: int, flags: int, machine: int = 190) -> bytes:
    data = bytearray(64)
    data[0:8] = b"\x7fELF\x02\x01\x01\x00"
    data[8] = abi
    data[18:20] = machine.to_bytes(2, "little")
    data[48:52] = flags.to_bytes(4, "little")
    return bytes(data)


def test_cubin_sm_follows_the_header_rule():
    assert cubin_sm(_header(7, 89 << 16)) == "sm89"
    assert cubin_sm(_header(8, 120 << 8)) == "sm120"
    cases = [
        (b"\x7fELF", "shorter"),
        (b"\x7fELF\x01\x01" + bytes(58), "64-bit little-endian"),
        (b"\x7fELF\x02\x02" + bytes(58), "64-bit little-endian"),
        (_header(8, 86 << 8, machine=62), "e_machine 62"),
        (_header(9, 86 << 8), "EI_ABIVERSION 9"),
        (_header(8, 75 << 8), "sm75"),
        (_header(7, 86 << 8), "sm0"),
    ]
    for data, words in cases:
        with pytest.raises(CubinArchitectureError, match=words):
            cubin_sm(data)
    with pytest.raises(ValueError, match="target name"):
        cubin_sm(_header(8, 86 << 8), targets=["86"])


# --- wheels ------------------------------------------------------------------------------------


def _wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def _bundle_files(root: Path, prefix: str) -> dict[str, bytes]:
    return {
        f"{prefix}{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in root.rglob("*")
        if p.is_file()
    }


def test_a_wheel_with_its_bundle_and_plugin_passes(bundle, tmp_path):
    root, manifest = bundle
    library = fx.build_plugin(tmp_path / "libw.so", manifest, root)
    files = _bundle_files(root, "pkg/bundle/")
    files["pkg/libplugin.so"] = library.read_bytes()
    wheel = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl", files)
    assert inspect_wheel(wheel, plugin="pkg/libplugin.so") == manifest["bundle_sha256"]
    assert inspect_wheel(wheel) == manifest["bundle_sha256"]


def test_wheel_refusals(bundle, tmp_path):
    root, _ = bundle
    files = _bundle_files(root, "pkg/bundle/")
    for bad in ("../evil", "/abs", "C:x", "a\\..\\x"):
        wheel = _wheel(tmp_path / "bad.whl", {**files, bad: b""})
        with pytest.raises(BundleError, match="wheel contains an invalid path"):
            inspect_wheel(wheel)
    two = _wheel(tmp_path / "two.whl", {**files, "other/bundle.json": b"{}"})
    with pytest.raises(BundleError, match=r"2 bundle\.json"):
        inspect_wheel(two)
    none = _wheel(tmp_path / "none.whl", {"pkg/__init__.py": b""})
    with pytest.raises(BundleError, match=r"0 bundle\.json"):
        inspect_wheel(none)
    good = _wheel(tmp_path / "good.whl", files)
    with pytest.raises(BundleError, match="invalid plugin path in wheel"):
        inspect_wheel(good, plugin="../libplugin.so")
    with pytest.raises(PluginBundleMismatchError) as raised:
        inspect_wheel(good, plugin="pkg/absent.so")
    assert "good.whl!" in str(raised.value)
    (tmp_path / "junk.whl").write_bytes(b"not a zip")
    with pytest.raises(zipfile.BadZipFile):
        inspect_wheel(tmp_path / "junk.whl")


def test_a_damaged_bundle_in_a_wheel_raises_its_class(bundle, tmp_path):
    root, _ = bundle
    files = _bundle_files(root, "pkg/bundle/")
    files["pkg/bundle/cubins/sm89/dot.cubin"] += b"x"
    wheel = _wheel(tmp_path / "damaged.whl", files)
    with pytest.raises(CorruptCubinError, match=r"damaged\.whl!"):
        inspect_wheel(wheel)


# --- the native command ------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tensoracle_executable(), "bundle", "inspect", *args], capture_output=True, text=True
    )


def test_the_native_command_prints_a_table_and_the_json_report(bundle, tmp_path):
    root, manifest = bundle
    library = fx.build_plugin(tmp_path / "libcli.so", manifest, root)
    table = _cli(str(root), "--plugin", str(library))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert f"bundle_sha256 {manifest['bundle_sha256']}" in lines
    header = next(line for line in lines if line.startswith("id "))
    assert header.split() == [
        "id",
        "target",
        "file",
        "bytes",
        "sha256",
        "registers",
        "dyn-shared",
        "in-plugin",
    ]
    row = next(line for line in lines if line.startswith("sm89.dot "))
    data = fx.cubin("dot", 89)
    assert row.split() == [
        "sm89.dot",
        "sm89",
        "cubins/sm89/dot.cubin",
        str(len(data)),
        hashlib.sha256(data).hexdigest()[:12],
        "2",
        "0",
        "yes",
    ]
    assert _cli(str(root), "--plugin", str(library), "--format", "table").stdout == table.stdout
    as_json = _cli(str(root), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert as_json.stderr == ""
    assert json.loads(as_json.stdout) == inspect_bundle_report(root)
    # The deprecated --json prints the same bytes, and one line on stderr saying what to use.
    deprecated = _cli(str(root), "--json")
    assert deprecated.returncode == 0
    assert deprecated.stdout == as_json.stdout
    assert (
        deprecated.stderr == "tensoracle bundle inspect: --json is deprecated; use --format json\n"
    )


def test_the_native_command_reports_a_failure_with_its_class(bundle):
    root, manifest = bundle
    manifest["entries"][3]["sha256"] = "0" * 64
    fx.write_manifest(root, manifest)
    failed = _cli(str(root), "--format", "json")
    assert failed.returncode == 1
    report = json.loads(failed.stdout)
    assert report["ok"] is False
    assert report["error"] == "CorruptCubinError"
    assert "entries[3].sha256" in report["message"]
    plain = _cli(str(root))
    assert plain.returncode == 1
    assert "CorruptCubinError" in plain.stderr
    assert _cli(str(root / "nowhere")).returncode == 1
    help_text = _cli("--help")
    assert help_text.returncode == 0
    assert "--format json|table" in help_text.stdout
    assert "--json" not in help_text.stdout  # deprecated: accepted, not offered
    assert "schema_version 1" in help_text.stdout
    assert _cli(str(root), "--json").stdout == failed.stdout
    for misuse in (("--format", "yaml"), ("--json", "--format", "table")):
        refused = _cli(str(root), *misuse)
        assert refused.returncode == 2
        assert refused.stdout == ""
        assert "--format" in refused.stderr
    assert "yaml not in {json,table}" in _cli(str(root), "--format", "yaml").stderr


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("kind", ["link to /dev/zero", "fifo", "directory"])
def test_a_bundle_json_that_is_no_regular_file_is_refused_without_reading_it(
    tmp_path, kind, platform
):
    # In a process of its own with a time limit: reading such a file would never end. A directory
    # was reported as IsADirectoryError naming a descriptor number; the core now refuses it.
    root = tmp_path / "bundle"
    root.mkdir()
    if kind == "fifo":
        os.mkfifo(root / "bundle.json")
    elif kind == "directory":
        (root / "bundle.json").mkdir()
    else:
        (root / "bundle.json").symlink_to("/dev/zero")
    script = (
        "import os\n"
        "import sys\n"
        "from pathlib import Path\n"
        "from tensoracle.bundle import inspect_bundle\n"
        "sys.platform = sys.argv[2]  # after the imports, which need not run as on Windows\n"
        "if sys.platform == 'win32':\n"
        f"    for name in {NOT_ON_WINDOWS!r}: delattr(os, name)\n"
        "try:\n"
        "    inspect_bundle(Path(sys.argv[1]))\n"
        "except (OSError, ValueError) as error:\n"
        "    print(type(error).__name__, error)\n"
        "else:\n"
        "    print('accepted')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(root), platform],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.startswith(("FileNotFoundError", "BundleError")), result.stdout
    assert "bundle.json" in result.stdout
