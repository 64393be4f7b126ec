"""Every command that prints data offers the same output switch, `--format json|table`, and
refuses any other value as a usage error naming the option and the value."""

from __future__ import annotations

import pytest
from cache_cli import run

# Each command that prints data, with the arguments that get it past its own required options
# (the bad --format value is refused before any of them is used).
DATA_COMMANDS = [
    ("cache", "list"),
    ("cache", "show"),
    ("cache", "diff"),
    ("cache", "verify"),
    ("cache", "prune"),
    ("cache", "pull"),
    ("cache", "push"),
    ("doctor",),
    ("build",),
    ("bundle", "inspect"),
    ("deploy", "triton"),
]


def _words(command: tuple[str, ...]) -> list[str]:
    return [word for part in command for word in part.split()]


@pytest.mark.parametrize("command", DATA_COMMANDS, ids=" ".join)
def test_the_help_offers_format_json_or_table(command: tuple[str, ...]) -> None:
    completed = run(*_words(command), "--help")
    assert completed.returncode == 0, completed.stderr
    lines = [line for line in completed.stdout.splitlines() if line.strip().startswith("--format")]
    assert lines, f"{' '.join(command)} --help offers no --format:\n{completed.stdout}"
    assert lines[0].split()[:2] == ["--format", "json|table"]
    assert "--json" not in completed.stdout  # the deprecated alias stays out of the help


@pytest.mark.parametrize("command", DATA_COMMANDS, ids=" ".join)
def test_another_format_is_a_usage_error_naming_it(command: tuple[str, ...]) -> None:
    completed = run(*_words(command), "--format", "yaml")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "--format" in completed.stderr
    assert "yaml" in completed.stderr
    assert completed.stdout == ""
