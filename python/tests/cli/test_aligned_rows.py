"""The tables of the Python subcommands (``aligned_rows``, drawn by rich): the native tables'
layout, whatever the cells hold."""

from __future__ import annotations

from tensoracle.cli.output_format import aligned_rows


def test_columns_are_two_spaces_apart_and_lines_end_without_spaces():
    assert aligned_rows([("NAME", "SIZE", "REASON"), ("alpha.engine", "1.0 KiB", "")]) == (
        "NAME          SIZE     REASON\nalpha.engine  1.0 KiB\n"
    )


def test_wide_characters_align_by_terminal_columns():
    text = aligned_rows([("NAME", "SIZE"), ("日本.engine", "1 B"), ("ab.engine", "2 B")])
    assert text == "NAME         SIZE\n日本.engine  1 B\nab.engine    2 B\n"


def test_long_rows_are_never_wrapped_or_cut_and_markup_is_not_read():
    reason = "refused: " + "the header records other conditions " * 10
    text = aligned_rows([("NAME", "REASON"), ("[bold]x[/bold].engine", reason)])
    assert text.splitlines()[1] == f"[bold]x[/bold].engine  {reason.rstrip()}"
    assert len(text.splitlines()) == 2


def test_indent_starts_every_line():
    assert aligned_rows([("tensorrt", "-"), ("tensorrt_rtx", "1.7")], "  ") == (
        "  tensorrt      -\n  tensorrt_rtx  1.7\n"
    )
