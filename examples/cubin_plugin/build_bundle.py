"""Rebuilds the example plugin's cubin bundle: ``python build_bundle.py [OUT_DIR]``.

Without OUT_DIR it writes ``bundle/`` next to this file (removing an earlier bundle there
first, so no stale cubin is left behind). The bundle holds the 1.x targets (sm86, sm89, sm120)
and sm80, sm90 and sm100, so the plugin also runs on A100, H100/H200 and B200 class GPUs. Needs
``tensoracle[producer]``; no GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
from pathlib import Path

from tensoracle.producer import compile_bundle

HERE = Path(__file__).resolve().parent
TARGETS = (80, 86, 89, 90, 100, 120)


def load_kernels() -> tuple:
    spec = importlib.util.spec_from_file_location(
        "example_plugin_kernels", HERE / "kernels.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.KERNELS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir", type=Path, nargs="?", default=HERE / "bundle")
    args = parser.parse_args()
    # Only what a bundle consists of is removed: bundle.json, bundle.cpp and cubins/.
    for name in ("bundle.json", "bundle.cpp"):
        (args.out_dir / name).unlink(missing_ok=True)
    shutil.rmtree(args.out_dir / "cubins", ignore_errors=True)
    manifest = compile_bundle(load_kernels(), args.out_dir, targets=TARGETS)
    print(
        f"{args.out_dir}: {len(manifest['entries'])} cubins, bundle {manifest['bundle_sha256']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
