"""A model folder on disk: whether one already there is the model that would be written, or an
empty folder to write it into, and writing its files and names durably."""

from __future__ import annotations

import filecmp
import os
from pathlib import Path


def _regular_files(root: Path) -> dict[str, Path] | None:
    """Every file under ``root`` by its relative path; None where something is not a regular
    file or folder (a link, say), which makes the folder another model than any written."""
    if root.is_symlink() or not root.is_dir():
        return None
    found = {}
    for folder, folders, files in os.walk(root):
        for name in (*folders, *files):
            path = Path(folder) / name
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                return None
            if name in files:
                found[path.relative_to(root).as_posix()] = path
    return found


def same_model(written: Path, existing: Path) -> bool:
    """Whether ``existing`` holds exactly the files of ``written``, byte for byte."""
    ours, theirs = _regular_files(written), _regular_files(existing)
    if ours is None or theirs is None or set(ours) != set(theirs):
        return False
    return all(filecmp.cmp(ours[name], theirs[name], shallow=False) for name in ours)


def is_empty_folder(path: Path) -> bool:
    """A folder (not a link to one) with nothing in it: one a model can be renamed onto."""
    return not path.is_symlink() and path.is_dir() and not any(path.iterdir())


def folder_mode() -> int:
    """The mode a folder made now would have (the umask applied)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def write_file(path: Path, text: str) -> None:
    """``text`` as the new file ``path``, flushed to the disk."""
    with open(path, "x", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())


def sync_folder(path: Path) -> None:
    """The names in the folder ``path`` (files created or renamed into it) to the disk."""
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
