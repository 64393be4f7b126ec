"""The ``--installed-package`` option of the test suite: the run fails at its start unless
``import tensoracle`` finds the package installed in the interpreter's own site-packages (from a
wheel), never the sources in python/src, and its summary names the package folder and the
extension file that were tested (``_core.abi3.so`` from the stable-ABI wheel).

``make wheel-abi3-test`` runs the suite this way; conftest.py registers the hooks."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

OPTION = "--installed-package"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="store_true",
        help="fail unless tensoracle is imported from this interpreter's site-packages",
    )


def _loaded() -> tuple[Path, Path]:
    """The folder of the imported tensoracle package and the file of its extension."""
    import tensoracle
    import tensoracle._core

    return Path(tensoracle.__file__).resolve().parent, Path(tensoracle._core.__file__).resolve()


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption(OPTION):
        return
    package, _ = _loaded()
    sites = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    if package.parent not in sites:
        raise pytest.UsageError(
            f"{OPTION}: tensoracle was imported from {package}, "
            f"not from this interpreter's site-packages ({', '.join(map(str, sorted(sites)))})"
        )


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if config.getoption(OPTION):
        package, extension = _loaded()
        terminalreporter.write_line(f"tensoracle tested: {package}, extension {extension.name}")
