"""The operating system and architecture in a saved engine's identity, on Linux and on Windows.

Python names the machine ``x86_64`` on Linux but ``AMD64`` on Windows (``aarch64`` and ``ARM64``):
the identity gives one name per architecture, so the keys read the same on both. Run here with
``platform.system()`` and ``platform.machine()`` as each platform reports them.
"""

from __future__ import annotations

import platform

import pytest

from tensoracle.cache import identity
from tensoracle.cli import doctor


@pytest.mark.parametrize(
    ("system", "machine", "expected"),
    [
        ("Linux", "x86_64", ("linux", "x86_64")),
        ("Windows", "AMD64", ("windows", "x86_64")),
        ("Linux", "aarch64", ("linux", "aarch64")),
        ("Windows", "ARM64", ("windows", "aarch64")),
        ("Darwin", "arm64", ("darwin", "aarch64")),
        ("Linux", "riscv64", ("linux", "riscv64")),
        ("", "", ("unknown", "unknown")),
    ],
)
def test_the_identity_names_the_system_and_architecture_one_way(
    monkeypatch, system, machine, expected
):
    monkeypatch.setattr(platform, "system", lambda: system)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    assert (identity.operating_system(), identity.architecture()) == expected
    # doctor reports the platform in the identity's words.
    assert doctor.platform_name() == "-".join(expected)
