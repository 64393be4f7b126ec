"""Text that a terminal may show without acting on it: the one escaping rule of every name and
reason tensoracle prints for people (tables, messages naming an object key), the same as the
native commands' tables.

A byte that was not UTF-8 (a surrogate escape, as ``os.fsdecode`` and ``surrogateescape`` keep
it) is shown as ``\\xNN`` (80..ff), a C0 control character or DEL as ``\\xNN``, a C1 control
character and the characters that reorder or hide text as ``\\uNNNN``, a backslash as two, so
two different names never print alike. The result is an :class:`EscapedText`, which the rule
leaves as it is: a name escaped once (a remote key in a listing) is shown the same in JSON and in
a table, never escaped twice.
"""

from __future__ import annotations

# The characters that reorder or hide text on a terminal: marks, separators, embeddings,
# overrides and isolates.
_REORDERING = {0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


class EscapedText(str):
    """A ``str`` already escaped by :func:`terminal_text`."""

    __slots__ = ()


def terminal_text(text: str) -> EscapedText:
    """``text`` escaped by the rule above; an :class:`EscapedText` is returned unchanged."""
    if isinstance(text, EscapedText):
        return text
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code < 0xA0 or code in _REORDERING or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        elif char == "\\":
            out.append("\\\\")
        else:
            out.append(char)
    return EscapedText("".join(out))
