"""Runs the Python examples of docs/cubin-plugins.md, in order, as one script."""

from __future__ import annotations

import re
import subprocess
import sys

from cubin_support import REPO, require_producer_tools

DOC = REPO / "docs" / "cubin-plugins.md"


def test_python_blocks_of_the_cubin_guide_run(tmp_path):
    require_producer_tools()
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 3
    (tmp_path / "examples").symlink_to(REPO / "examples")
    script = tmp_path / "guide.py"
    script.write_text("\n".join(blocks))
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SHA-256" in result.stdout  # the tampered cubin's error message was printed
