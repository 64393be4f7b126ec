"""A wheel read as an untrusted zip archive, within limits: what :func:`tensoracle.bundle.
inspect_wheel` takes out of it.

Every member name is checked before anything is read (a safe relative path, no control
character, at most :data:`MAX_NAME_BYTES` bytes, :data:`MAX_PART_BYTES` per part and
:data:`MAX_DEPTH` parts; no name twice, no file that is also a folder of another member; at most
:data:`MAX_MEMBERS` members). A member is then copied out of the archive only on request, never
the whole archive: its declared sizes (from the central directory) are judged against the caps
before a byte is inflated, and the bytes actually inflated are counted while reading, in chunks of
at most :data:`CHUNK_BYTES`, so that a header that lies about its size is caught as well. The
decompressors (stored, deflate, bzip2, lzma) are driven here with a bound on their output per
call: a bzip2 member of a few kilobytes that would inflate to gigabytes never takes more memory
than one chunk.

Every refusal is a :class:`BundleError` naming the wheel, the member and the limit; an archive
that cannot be read at all is a :class:`WheelArchiveError`, which is both a ``BundleError`` and
the ``zipfile.BadZipFile`` 1.x raised.
"""

from __future__ import annotations

import bz2
import lzma
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Protocol

from tensoracle import _core
from tensoracle.errors import BundleError

#: Members an archive may hold.
MAX_MEMBERS = 100_000
#: UTF-8 bytes of a member's name, of one of its parts, and parts of a name.
MAX_NAME_BYTES = 4096
MAX_PART_BYTES = 255
MAX_DEPTH = 64
#: How much larger than its compressed bytes a member may inflate (members of at most
#: :data:`RATIO_FREE_BYTES` are not judged: a small file of zeros harms nobody).
MAX_RATIO = 100
RATIO_FREE_BYTES = 1 << 20
#: Bytes inflated per decompressor call, and bytes read from the archive at a time.
CHUNK_BYTES = 1 << 20
#: Bytes copied out of one archive in all (the largest plugin the core reads).
MAX_TOTAL_BYTES = 2 << 30

_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


class WheelArchiveError(BundleError, zipfile.BadZipFile):
    """The wheel is not a zip archive that can be read: not a zip at all, a damaged or lying
    header, a member whose bytes do not inflate or do not match their CRC-32, an encrypted member
    or an unknown compression method. A :class:`BundleError` and, as in 1.x, a
    ``zipfile.BadZipFile``."""


class _Inflater(Protocol):
    def decompress(self, data: bytes, max_length: int = -1) -> bytes: ...

    @property
    def needs_input(self) -> bool: ...

    @property
    def eof(self) -> bool: ...


class _Stored:
    def __init__(self) -> None:
        self._pending = b""

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        self._pending += data
        out, self._pending = self._pending[:max_length], self._pending[max_length:]
        return out

    @property
    def needs_input(self) -> bool:
        return not self._pending

    @property
    def eof(self) -> bool:
        return False


class _Deflate:
    """zlib's raw deflate with the needs_input of bz2 and lzma's decompressors."""

    def __init__(self) -> None:
        self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        self._tail = b""

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        out = self._inflater.decompress(self._tail + data, max(max_length, 0))
        self._tail = self._inflater.unconsumed_tail
        return out

    @property
    def needs_input(self) -> bool:
        return not self._tail

    @property
    def eof(self) -> bool:
        return self._inflater.eof


class _ZipLzma:
    """A zip member's LZMA stream (a 4-byte header, the 5 bytes of LZMA properties, then the
    data) read as the .lzma format, whose header is those properties and the size, unknown."""

    def __init__(self) -> None:
        self._inflater = lzma.LZMADecompressor(format=lzma.FORMAT_ALONE)
        self._header = b""

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        if len(self._header) < 9:
            self._header += data
            if len(self._header) < 9:
                return b""
            (properties_size,) = struct.unpack("<H", self._header[2:4])
            if properties_size != 5:
                raise lzma.LZMAError(f"{properties_size} bytes of LZMA properties, not 5")
            data = self._header[4:9] + b"\xff" * 8 + self._header[9:]
        return self._inflater.decompress(data, max_length)

    @property
    def needs_input(self) -> bool:
        return len(self._header) < 9 or self._inflater.needs_input

    @property
    def eof(self) -> bool:
        return self._inflater.eof


def _inflater(method: int) -> _Inflater:
    if method == zipfile.ZIP_STORED:
        return _Stored()
    if method == zipfile.ZIP_DEFLATED:
        return _Deflate()
    if method == zipfile.ZIP_BZIP2:
        return bz2.BZ2Decompressor()
    return _ZipLzma()


class WheelArchive:
    """An opened wheel whose member names passed the checks (see the module's docstring).

    Raises (on opening):
        WheelArchiveError: ``path`` is not a readable zip archive.
        BundleError: A member name breaks a rule; the message names it and the rule.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as error:
            raise WheelArchiveError(f"wheel {path} is not a zip archive: {error}") from None
        try:
            self.files, self.folders = self._judge_names()
        except BaseException:
            self._zip.close()
            raise
        self._copied = 0
        self._taken: set[tuple[str, ...]] = set()

    def __enter__(self) -> WheelArchive:
        return self

    def __exit__(self, *_: object) -> None:
        self._zip.close()

    def _refuse(self, name: str, why: str) -> BundleError:
        return BundleError(f"wheel contains an invalid path: {name!r} {why} (in {self.path})")

    def _judge_names(
        self,
    ) -> tuple[dict[tuple[str, ...], zipfile.ZipInfo], set[tuple[str, ...]]]:
        members = self._zip.infolist()
        if len(members) > MAX_MEMBERS:
            raise BundleError(
                f"wheel {self.path} holds {len(members)} members, more than the limit of "
                f"{MAX_MEMBERS}"
            )
        files: dict[tuple[str, ...], zipfile.ZipInfo] = {}
        folders: dict[tuple[str, ...], str] = {}
        for member in members:
            name = member.filename
            if not _core.is_safe_relative_path(name):
                raise self._refuse(name, "is not a safe relative path")
            if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
                raise self._refuse(name, "holds a control character")
            parts = PurePosixPath(name).parts
            if not parts:
                raise self._refuse(name, "names nothing")
            if len(parts) > MAX_DEPTH:
                raise self._refuse(
                    name[:80] + "...",
                    f"is {len(parts)} levels deep, beyond the limit of {MAX_DEPTH}",
                )
            size = len(name.encode("utf-8", "surrogateescape"))
            if size > MAX_NAME_BYTES:
                raise self._refuse(
                    name[:80] + "...", f"is {size} bytes long, beyond the limit of {MAX_NAME_BYTES}"
                )
            for part in parts:
                if len(part.encode("utf-8", "surrogateescape")) > MAX_PART_BYTES:
                    raise self._refuse(
                        name[:80] + "...",
                        f"has a part of {len(part.encode('utf-8', 'surrogateescape'))} bytes, "
                        f"beyond the limit of {MAX_PART_BYTES}",
                    )
            for depth in range(1, len(parts)):
                folders.setdefault(parts[:depth], name)
            if member.is_dir():
                folders.setdefault(parts, name)
                continue
            if parts in files:
                raise self._refuse(
                    name, f"is in the archive twice (also as {files[parts].filename!r})"
                )
            files[parts] = member
        for parts, member in files.items():
            if parts in folders:
                raise self._refuse(
                    member.filename, f"is a file and also the folder of {folders[parts]!r}"
                )
        return files, set(folders)

    def _judge_sizes(self, member: zipfile.ZipInfo, limit: int) -> None:
        name = member.filename
        if member.compress_type not in _METHODS:
            raise WheelArchiveError(
                f"wheel {self.path}: member {name!r} uses compression method "
                f"{member.compress_type}, not one of {', '.join(_METHODS.values())}"
            )
        if member.flag_bits & 0x1:
            raise WheelArchiveError(f"wheel {self.path}: member {name!r} is encrypted")
        if member.file_size > limit:
            raise BundleError(
                f"wheel {self.path}: member {name!r} is {member.file_size} bytes, larger than "
                f"the limit of {limit} bytes"
            )
        if member.file_size > RATIO_FREE_BYTES and member.file_size > MAX_RATIO * max(
            member.compress_size, 1
        ):
            raise BundleError(
                f"wheel {self.path}: member {name!r} would inflate {member.compress_size} bytes "
                f"to {member.file_size}, more than the limit of {MAX_RATIO} times"
            )
        if self._copied + member.file_size > MAX_TOTAL_BYTES:
            raise BundleError(
                f"wheel {self.path}: member {name!r} of {member.file_size} bytes would take the "
                f"bytes taken out of the wheel beyond the limit of {MAX_TOTAL_BYTES}"
            )

    def _data_offset(self, member: zipfile.ZipInfo, archive: BinaryIO) -> int:
        archive.seek(member.header_offset)
        header = archive.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
            raise WheelArchiveError(
                f"wheel {self.path}: member {member.filename!r} has no local header at offset "
                f"{member.header_offset}"
            )
        fields = _LOCAL_HEADER.unpack(header)
        name_size, extra_size = int(fields[-2]), int(fields[-1])
        name = archive.read(name_size)
        expected = member.orig_filename.encode(
            "utf-8" if member.flag_bits & 0x800 else "cp437", "surrogateescape"
        )
        if name != expected:
            raise WheelArchiveError(
                f"wheel {self.path}: member {member.filename!r} is named {name!r} in its local "
                "header"
            )
        return member.header_offset + _LOCAL_HEADER.size + name_size + extra_size

    def _chunks(self, member: zipfile.ZipInfo, limit: int) -> Iterator[bytes]:
        """The member's inflated bytes, checked against its declared size, the ratio, ``limit``
        and its CRC-32 as they come."""
        name = member.filename
        inflater = _inflater(member.compress_type)
        budget = min(member.file_size, limit)
        produced = 0
        crc = 0
        with open(self.path, "rb") as archive:
            archive.seek(self._data_offset(member, archive))
            left = member.compress_size
            try:
                while True:
                    raw = b""
                    if inflater.needs_input and left > 0:
                        raw = archive.read(min(left, CHUNK_BYTES))
                        if not raw:
                            raise WheelArchiveError(
                                f"wheel {self.path}: member {name!r} ends {left} bytes before "
                                "its declared compressed size"
                            )
                        left -= len(raw)
                    elif inflater.eof:
                        break
                    # One byte beyond the budget shows a member larger than it said.
                    out = inflater.decompress(raw, min(CHUNK_BYTES, budget - produced + 1))
                    produced += len(out)
                    if produced > budget:
                        raise self._overflow(member, limit, produced)
                    crc = zlib.crc32(out, crc)
                    if out:
                        yield out
                    elif not raw:
                        break
            except BundleError:
                raise
            except (zlib.error, OSError, lzma.LZMAError, EOFError) as error:
                raise WheelArchiveError(
                    f"wheel {self.path}: member {name!r} does not inflate: {error}"
                ) from None
        if produced != member.file_size or crc != member.CRC:
            raise WheelArchiveError(
                f"wheel {self.path}: member {name!r} inflated to {produced} bytes with CRC-32 "
                f"{crc:08x}, its header says {member.file_size} bytes and {member.CRC:08x}"
            )

    def _overflow(self, member: zipfile.ZipInfo, limit: int, produced: int) -> BundleError:
        if member.file_size >= limit:
            return BundleError(
                f"wheel {self.path}: member {member.filename!r} inflates beyond the limit of "
                f"{limit} bytes"
            )
        return WheelArchiveError(
            f"wheel {self.path}: member {member.filename!r} inflates to more than the "
            f"{member.file_size} bytes its header declares (read {produced})"
        )

    def copy(self, parts: tuple[str, ...], destination: Path, limit: int) -> None:
        """Writes the file member ``parts`` to ``destination`` (its folders made), refusing it
        as the module's docstring says when it is larger than ``limit`` bytes; a member taken
        out already is not written again."""
        if parts in self._taken:
            return
        member = self.files[parts]
        self._judge_sizes(member, limit)
        destination.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            for chunk in self._chunks(member, limit):
                out.write(chunk)
        self._copied += member.file_size
        self._taken.add(parts)
