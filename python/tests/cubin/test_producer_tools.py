"""Where the producer finds ptxas and cuobjdump in their wheels, on Linux and on Windows.

The Windows wheels (nvidia-cuda-nvcc and nvidia-cuda-cuobjdump 13.2.86, win_amd64) hold
``nvidia/cu13/bin/ptxas.exe`` and ``nvidia/cu13/bin/cuobjdump.exe``; the Linux ones the same
names without ``.exe``. The lookup runs here against a distribution installed in a temporary
folder put first on ``sys.path``, laid out as those wheels are, with ``sys.platform`` as each
platform has it. Needs neither Triton nor the real tool wheels.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tensoracle.errors import ProducerToolError
from tensoracle.producer.tools import TOOL_PACKAGES, tool_relative_path, wheel_tool

PLATFORMS = [("win32", ".exe"), ("linux", "")]
TOOLS = sorted(TOOL_PACKAGES)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(("platform", "suffix"), PLATFORMS)
def test_the_tool_path_in_its_wheel_has_the_platforms_suffix(monkeypatch, tool, platform, suffix):
    monkeypatch.setattr(sys, "platform", platform)
    assert tool_relative_path(tool) == f"nvidia/cu13/bin/{tool}{suffix}"


def install(site: Path, tool: str, files: list[str]) -> None:
    """Installs the tool's distribution into ``site``: its metadata and ``files`` (relative)."""
    package = TOOL_PACKAGES[tool]
    info = site / f"{package.replace('-', '_')}-13.2.86.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 13.2.86\n")
    for relative in files:
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(("platform", "suffix"), PLATFORMS)
def test_the_wheel_tool_is_the_platforms_file(tmp_path, monkeypatch, tool, platform, suffix):
    site = tmp_path / "site-packages"
    # Both names present: only the platform's is taken.
    install(site, tool, [f"nvidia/cu13/bin/{tool}", f"nvidia/cu13/bin/{tool}.exe"])
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "platform", platform)
    assert wheel_tool(tool) == site / "nvidia" / "cu13" / "bin" / f"{tool}{suffix}"


@pytest.mark.parametrize("tool", TOOLS)
def test_on_windows_a_wheel_without_the_exe_is_reported_naming_it(tmp_path, monkeypatch, tool):
    site = tmp_path / "site-packages"
    install(site, tool, [f"nvidia/cu13/bin/{tool}"])  # the Linux wheel's layout
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(ProducerToolError) as caught:
        wheel_tool(tool)
    message = str(caught.value)
    assert f"no file nvidia/cu13/bin/{tool}.exe " in message
    assert f"(looked at {site / 'nvidia' / 'cu13' / 'bin' / f'{tool}.exe'})" in message
    assert TOOL_PACKAGES[tool] in message
