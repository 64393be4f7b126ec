"""``python -m tensoracle.cli``: what the native command runs for Python subcommands."""

import sys

from tensoracle.cli import main

sys.exit(main())
