"""Writes simple_model/model.safetensors (the committed file was made by this script)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import save_file


def main() -> None:
    target = Path(__file__).with_name("model.safetensors")
    save_file({"bias": np.array([0.5, -1.25], dtype=np.float32)}, str(target))
    print(f"wrote {target} ({target.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
