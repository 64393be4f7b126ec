"""Tables are for terminals: a name a table prints cannot make the terminal act (set its title,
clear the screen, move the cursor), and two different names never print alike."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cache_cli import DAY_NS, NOW_NS, engine, tensoracle_executable

from tensoracle.cli.output_format import aligned_rows, terminal_text

# Names as bytes: an OSC that sets the title, a CSI that clears the screen, two names that differ
# only in a byte that is not UTF-8, and one whose text looks like the escape of another.
HOSTILE = [
    b"\x1b]0;owned\x07a.engine",
    b"\x1b[2Jb.engine",
    b"n\xff.engine",
    b"n\xfe.engine",
    b"n\\xff.engine",
    b"n\xc2\x9bc.engine",
]
CONTROL_BYTES = {*range(0x20), 0x7F}


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("model-ab12.engine", "model-ab12.engine"),
        ("m\u00fcnchen \u20ac", "m\u00fcnchen \u20ac"),
        ("\x1b]0;owned\x07x", "\\x1b]0;owned\\x07x"),
        ("tab\tnew\nline\r\x7f\x00", "tab\\x09new\\x0aline\\x0d\\x7f\\x00"),
        ("\x85\x9b", "\\u0085\\u009b"),
        ("a\u202eb\u2066c\u2028", "a\\u202eb\\u2066c\\u2028"),
        (os.fsdecode(b"n\xff"), "n\\xff"),
        ("n\\xff", "n\\\\xff"),
    ],
)
def test_terminal_text(text: str, shown: str) -> None:
    assert terminal_text(text) == shown


def test_different_names_never_print_alike() -> None:
    names = [os.fsdecode(name) for name in HOSTILE] + ["n\ufffd.engine"]
    assert len({terminal_text(name) for name in names}) == len(names)


def test_text_escaped_once_is_shown_as_it_is_plain_text_is_escaped() -> None:
    once = terminal_text("a\\b\x01")
    assert once == "a\\\\b\\x01"
    assert terminal_text(once) == once  # a remote key's escaped name, put in a table
    assert terminal_text(str(once)) == "a\\\\\\\\b\\\\x01"
    assert aligned_rows([("NAME",), (once,)]) == f"NAME\n{once}\n"


def test_aligned_rows_escapes_every_cell_before_aligning() -> None:
    assert aligned_rows([("NAME", "X"), ("a\x1bb", "1")]) == "NAME    X\na\\x1bb  1\n"


def _table(*args: str) -> bytes:
    completed = subprocess.run(
        [tensoracle_executable(), *args, "--format", "table"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode in (0, 1), completed.stderr
    return completed.stdout


@pytest.fixture
def hostile_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir()
    engine(cache, "good", mtime_ns=NOW_NS - DAY_NS)
    for name in HOSTILE:
        with open(os.path.join(os.fsencode(cache), name), "wb") as file:
            file.write(b"not an engine")
    return cache


@pytest.mark.parametrize(
    "command",
    [("cache", "list"), ("cache", "verify"), ("cache", "prune", "--unused-for", "0", "--dry-run")],
    ids=" ".join,
)
def test_tables_print_no_control_bytes(hostile_cache: Path, command: tuple[str, ...]) -> None:
    shown = _table(*command, "--cache-dir", str(hostile_cache))
    assert set(shown) & CONTROL_BYTES <= {0x0A}, shown
    assert b"\xc2\x9b" not in shown  # the one-character CSI
    text = shown.decode()  # every byte that was not UTF-8 is written as \xNN
    for name in HOSTILE:
        assert terminal_text(os.fsdecode(name)) in text


def test_list_shows_names_differing_in_an_undecodable_byte_apart(hostile_cache: Path) -> None:
    text = _table("cache", "list", "--cache-dir", str(hostile_cache)).decode()
    assert "n\\xff.engine" in text
    assert "n\\xfe.engine" in text
    assert "n\\\\xff.engine" in text
    assert "\ufffd" not in text
