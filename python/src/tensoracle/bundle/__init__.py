"""Inspection of tensoracle 1.x cubin bundles and of the plugin libraries (or wheels) built from
them.

A bundle is a directory holding ``bundle.json`` (``schema_version`` 1, one entry per SM and
kernel) and the cubins its entries name. Each failed check raises its own subclass of
:class:`BundleError`, itself a ``ValueError``.

Besides the 1.x names in ``__all__``, :func:`inspect_bundle_report` returns the core's detailed
report: ``{"ok", "directory", "bundle_sha256", "schema_version", "producer": {"triton",
"ptxas"}, "plugin", "entries": [...]}``, one entry per manifest entry with ``index``, ``id``,
``kernel``, ``target_sm``, ``file``, ``bytes``, ``sha256``, ``entry_symbol``,
``embedded_symbol``, ``signature`` (``name``, ``type``, ``divisibility``), ``params``,
``registers_per_thread``, ``compiled_shared_memory_bytes``,
``launch_dynamic_shared_memory_bytes``, ``source_sha256`` and ``in_plugin`` (``None`` without a
plugin).

The part's modules: :mod:`.inspection` (the checks) and :mod:`.wheel_archive` (a wheel read as an
untrusted zip archive, within limits). Importing this package loads neither TensorRT, Triton,
torch nor a GPU library.
"""

# SMS_1X and inspect_bundle_report are not in __all__ (1.x has neither), yet importable by name.
from tensoracle.bundle.inspection import SMS_1X as SMS_1X
from tensoracle.bundle.inspection import bundle_sha256, cubin_sm, inspect_bundle, inspect_wheel
from tensoracle.bundle.inspection import inspect_bundle_report as inspect_bundle_report
from tensoracle.errors import (
    BundleError,
    CorruptCubinError,
    CubinArchitectureError,
    MissingCubinError,
    PluginBundleMismatchError,
)

__all__ = [
    "BundleError",
    "CorruptCubinError",
    "CubinArchitectureError",
    "MissingCubinError",
    "PluginBundleMismatchError",
    "bundle_sha256",
    "cubin_sm",
    "inspect_bundle",
    "inspect_wheel",
]
