"""Entry point: `python tools/gpu_check [OPTIONS]` (or `tools/gpu-check`, or `make gpu-check`)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_check.cli import main

raise SystemExit(main())
