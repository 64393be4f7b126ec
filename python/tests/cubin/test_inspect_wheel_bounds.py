"""inspect_wheel reads a wheel as an untrusted archive (issue 28, case 2): only bundle.json, the
cubins it names and the plugin are taken out, into a temporary directory removed on every path;
sizes and the compression ratio are judged from the central directory before inflating, and the
inflated bytes are counted while reading, so bombs (deflate, bzip2, lzma; honest or lying
headers), odd member names and damaged archives are BundleErrors naming the member and the limit,
and nothing is left in the temporary folder."""

from __future__ import annotations

import bz2
import io
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import bundle_fixtures as fx
import pytest

import tensoracle.bundle.wheel_archive as wheel_archive
from tensoracle.bundle import (
    BundleError,
    CorruptCubinError,
    MissingCubinError,
    PluginBundleMismatchError,
    inspect_wheel,
)
from tensoracle.bundle.wheel_archive import WheelArchiveError

MiB = 1 << 20


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary folder inspect_wheel works in (TMPDIR), empty after every test."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    yield folder
    assert list(folder.iterdir()) == []


@pytest.fixture
def bundle(tmp_path: Path) -> tuple[dict[str, bytes], dict[str, Any]]:
    root = tmp_path / "bundle"
    root.mkdir()
    manifest = fx.make_bundle(root, kernels=("dot",), sms=(89,))
    files = {
        f"pkg/bundle/{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in root.rglob("*")
        if p.is_file()
    }
    return files, manifest


def wheel(
    path: Path,
    files: dict[str, bytes],
    method: int = zipfile.ZIP_DEFLATED,
    methods: dict[str, int] | None = None,
) -> Path:
    """A zip of ``files``, compressed with ``method`` or the member's own of ``methods``."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data, compress_type=(methods or {}).get(name, method))
    return path


def lie(path: Path, name: str, *, file_size: int, crc: int | None = None) -> None:
    """Rewrites the sizes ``name``'s local and central headers declare (and its CRC-32)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(name)
    crc = info.CRC if crc is None else crc
    struct.pack_into("<L", data, info.header_offset + 14, crc)
    struct.pack_into("<L", data, info.header_offset + 22, file_size)
    central = data.find(b"PK\x01\x02", 0)
    while data[central + 46 : central + 46 + len(name)] != name.encode():
        central = data.find(b"PK\x01\x02", central + 1)
    struct.pack_into("<L", data, central + 16, crc)
    struct.pack_into("<L", data, central + 24, file_size)
    path.write_bytes(bytes(data))


CUBIN = "pkg/bundle/cubins/sm89/dot.cubin"


def test_a_valid_wheel_passes_and_leaves_nothing_behind(bundle, tmp_path, scratch):
    files, manifest = bundle
    for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        path = wheel(tmp_path / f"ok-{method}.whl", files, method)
        assert inspect_wheel(path) == manifest["bundle_sha256"]


def test_a_valid_wheel_with_its_plugin_passes(bundle, tmp_path, scratch):
    files, manifest = bundle
    root = tmp_path / "bundle"
    library = fx.build_plugin(tmp_path / "libw.so", manifest, root)
    path = wheel(tmp_path / "p.whl", {**files, "pkg/libplugin.so": library.read_bytes()})
    assert inspect_wheel(path, plugin="pkg/libplugin.so") == manifest["bundle_sha256"]
    with pytest.raises(PluginBundleMismatchError, match=r"p\.whl!"):
        inspect_wheel(path, plugin="pkg/absent.so")


def test_a_bomb_the_bundle_does_not_name_is_never_inflated(bundle, tmp_path, scratch):
    files, manifest = bundle
    bomb = {"pkg/data/zeros.bin": bytes(64 * MiB)}
    path = wheel(
        tmp_path / "b.whl", {**files, **bomb}, methods=dict.fromkeys(bomb, zipfile.ZIP_BZIP2)
    )
    assert path.stat().st_size < 16_000
    # Its CRC-32 made wrong: inflating it, even in part, would end in an archive error.
    lie(path, "pkg/data/zeros.bin", file_size=64 * MiB, crc=0)
    with zipfile.ZipFile(path) as archive, pytest.raises(zipfile.BadZipFile):
        archive.read("pkg/data/zeros.bin")
    assert inspect_wheel(path) == manifest["bundle_sha256"]


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_named_bomb_is_refused_by_its_ratio_before_inflating(bundle, tmp_path, scratch, method):
    files, _ = bundle
    path = wheel(tmp_path / "r.whl", {**files, CUBIN: bytes(20 * MiB)}, method)
    assert path.stat().st_size < 64_000
    with pytest.raises(BundleError) as caught:
        inspect_wheel(path)
    assert type(caught.value) is BundleError
    message = str(caught.value)
    assert f"member '{CUBIN}' would inflate" in message
    assert f"to {20 * MiB}, more than the limit of 100 times" in message


def test_a_member_declared_beyond_its_limit_is_refused_before_inflating(bundle, tmp_path, scratch):
    files, _ = bundle
    path = wheel(tmp_path / "s.whl", files)
    lie(path, CUBIN, file_size=300 * MiB)
    with pytest.raises(BundleError) as caught:
        inspect_wheel(path)
    assert str(caught.value) == (
        f"wheel {path}: member '{CUBIN}' is {300 * MiB} bytes, larger than the limit of "
        f"{256 * MiB} bytes"
    )
    path = wheel(tmp_path / "m.whl", {**files, "pkg/bundle/bundle.json": b"{}"})
    lie(path, "pkg/bundle/bundle.json", file_size=5 * MiB)
    with pytest.raises(BundleError, match=f"larger than the limit of {4 * MiB} bytes"):
        inspect_wheel(path)


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_header_that_lies_about_the_size_is_caught_while_reading(
    bundle, tmp_path, scratch, method
):
    # 64 MiB of zeros declared as 1,000 bytes with the CRC of those 1,000: zipfile would hand out
    # the first 1,000 and never notice; the count stops at byte 1,001.
    files, _ = bundle
    path = wheel(tmp_path / "l.whl", {**files, CUBIN: bytes(64 * MiB)}, method)
    assert path.stat().st_size < 128_000
    lie(path, CUBIN, file_size=1000, crc=zlib.crc32(bytes(1000)))
    with pytest.raises(WheelArchiveError) as caught:
        inspect_wheel(path)
    assert str(caught.value) == (
        f"wheel {path}: member '{CUBIN}' inflates to more than the 1000 bytes its header "
        "declares (read 1001)"
    )


def test_a_member_whose_bytes_or_crc_are_wrong_is_an_archive_error(bundle, tmp_path, scratch):
    files, _ = bundle
    path = wheel(tmp_path / "c.whl", files)
    with zipfile.ZipFile(path) as archive:
        size = archive.getinfo(CUBIN).file_size
    lie(path, CUBIN, file_size=size, crc=0)
    with pytest.raises(WheelArchiveError, match=f"member '{CUBIN}' inflated to {size} bytes"):
        inspect_wheel(path)
    path = wheel(tmp_path / "d.whl", files, zipfile.ZIP_BZIP2)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(CUBIN)
    start = info.header_offset + 30 + len(CUBIN)
    data[start + 10 : start + 30] = b"\x00" * 20
    path.write_bytes(bytes(data))
    with pytest.raises(WheelArchiveError, match=f"member '{CUBIN}' does not inflate"):
        inspect_wheel(path)


def test_a_damaged_cubin_in_a_sound_archive_keeps_its_1x_class(bundle, tmp_path, scratch):
    files, _ = bundle
    with pytest.raises(CorruptCubinError, match=r"w\.whl!"):
        inspect_wheel(wheel(tmp_path / "w.whl", {**files, CUBIN: files[CUBIN] + b"x"}))
    del files[CUBIN]
    with pytest.raises(MissingCubinError):
        inspect_wheel(wheel(tmp_path / "x.whl", files))


def test_what_is_taken_out_in_all_is_bounded(bundle, tmp_path, scratch, monkeypatch):
    files, _ = bundle
    monkeypatch.setattr(wheel_archive, "MAX_TOTAL_BYTES", len(files["pkg/bundle/bundle.json"]))
    with pytest.raises(BundleError, match=f"member '{CUBIN}' of .* beyond the limit of"):
        inspect_wheel(wheel(tmp_path / "t.whl", files))


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"pkg/bundle": b""}, "'pkg/bundle' is a file and also the folder of 'pkg/bundle/"),
        ({"pkg/" + "n" * 300: b""}, "has a part of 300 bytes, beyond the limit of 255"),
        ({"a/" * 3000 + "x": b""}, "is 3001 levels deep, beyond the limit of 64"),
        ({"pkg/" + ("n" * 250 + "/") * 17 + "x": b""}, "is 4272 bytes long, beyond the limit"),
        ({"pkg/a\x01b": b""}, "holds a control character"),
        ({"../evil": b""}, "is not a safe relative path"),
    ],
)
def test_odd_member_names_are_bundle_errors_naming_the_member(
    bundle, tmp_path, scratch, extra, words
):
    files, _ = bundle
    with pytest.raises(BundleError, match="wheel contains an invalid path") as caught:
        inspect_wheel(wheel(tmp_path / "n.whl", {**files, **extra}))
    assert type(caught.value) is BundleError
    assert words in str(caught.value)
    assert "n.whl" in str(caught.value)


def test_a_member_twice_is_refused(bundle, tmp_path, scratch):
    files, _ = bundle
    path = wheel(tmp_path / "twice.whl", files)
    with (
        pytest.warns(UserWarning, match="Duplicate name"),
        zipfile.ZipFile(path, "a") as archive,
    ):
        archive.writestr(CUBIN, b"other")
    with pytest.raises(BundleError, match=f"'{CUBIN}' is in the archive twice"):
        inspect_wheel(path)
    # The same file under two spellings of its path.
    path = wheel(tmp_path / "spelled.whl", {**files, CUBIN.replace("/sm89/", "//sm89/"): b""})
    with pytest.raises(BundleError, match="is in the archive twice"):
        inspect_wheel(path)


def test_too_many_members_are_refused(bundle, tmp_path, scratch, monkeypatch):
    files, _ = bundle
    monkeypatch.setattr(wheel_archive, "MAX_MEMBERS", len(files))
    path = wheel(tmp_path / "many.whl", {**files, "pkg/one-more": b""})
    with pytest.raises(BundleError, match=f"holds {len(files) + 1} members, more than the limit"):
        inspect_wheel(path)


def test_an_unreadable_archive_is_both_bad_zip_and_bundle_error(bundle, tmp_path, scratch):
    files, _ = bundle
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"not a zip")
    for path in (junk, tmp_path / "cut.whl"):
        if path != junk:
            whole = wheel(tmp_path / "whole.whl", files).read_bytes()
            path.write_bytes(whole[: len(whole) // 2])
        with pytest.raises(zipfile.BadZipFile) as caught:
            inspect_wheel(path)
        assert isinstance(caught.value, BundleError)
        assert str(caught.value).startswith(f"wheel {path} is not a zip archive")


def member_bytes(path: Path, name: str) -> bytes:
    """The compressed bytes of member ``name`` as the archive stores them."""
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(name)
    name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + name_length + extra_length
    return data[start : start + info.compress_size]


def test_lzma_bzip2_and_deflate_inflate_in_bounded_steps(tmp_path: Path):
    # The decompressors are driven with a bound on each call's output; LZMA's is read from a
    # member that zipfile itself wrote (its 4-byte header and properties, then the data).
    zeros = bytes(8 * MiB)
    lzma_member = member_bytes(wheel(tmp_path / "l.whl", {"z": zeros}, zipfile.ZIP_LZMA), "z")
    assert len(lzma_member) < 16_000
    for compressed, inflater in (
        (lzma_member, wheel_archive._inflater(zipfile.ZIP_LZMA)),
        (bz2.compress(zeros), wheel_archive._inflater(zipfile.ZIP_BZIP2)),
        (zlib.compress(zeros)[2:-4], wheel_archive._inflater(zipfile.ZIP_DEFLATED)),
    ):
        first = inflater.decompress(compressed, 4096)
        assert first == bytes(4096)
        assert not inflater.needs_input
        inflated = len(first)
        while not inflater.eof:
            step = inflater.decompress(b"", MiB)
            assert 0 < len(step) <= MiB
            assert step == bytes(len(step))
            inflated += len(step)
        assert inflated == len(zeros)
