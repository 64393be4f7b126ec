"""Engines: what a build declares (``declaration``, ``io``), building a plan (``build``, with
``progress``, ``plugins``, ``target_support``, ``memory``, ``log`` and the ``backends``),
opening one through the cache (``open``) and the handles it returns (``handle``).

Importing this package imports none of its modules; ``tensoracle`` re-exports the public names.
"""
