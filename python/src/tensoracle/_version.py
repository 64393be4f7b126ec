"""The installed package's version, where tensoracle 1.x kept it (in the forms setuptools-scm
writes). ``tensoracle.__version__`` is not defined, as in 1.x; ``tensoracle --version`` and
``importlib.metadata.version("tensoracle")`` give the same string."""

from importlib import metadata

__version__: str = metadata.version("tensoracle")
version: str = __version__
__version_tuple__: tuple[int | str, ...] = tuple(
    int(part) if part.isdigit() else part for part in __version__.split(".")
)
version_tuple = __version_tuple__
