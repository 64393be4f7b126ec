"""Rebuilds the example plugin's cubin bundle: ``python build_bundle.py [OUT_DIR]``.

Without OUT_DIR it replaces ``bundle/`` next to this file. Needs ``tensoracle[producer]``, no GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from tensoracle.producer import compile_bundle

HERE = Path(__file__).resolve().parent


def load_kernels() -> list:
    spec = importlib.util.spec_from_file_location(
        "example_plugin_kernels", HERE / "kernels.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.KERNELS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir", type=Path, nargs="?", default=HERE / "bundle")
    args = parser.parse_args()
    bundle = compile_bundle(load_kernels(), args.out_dir, overwrite=True)
    print(f"{bundle.directory}: bundle {bundle.sha256}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
