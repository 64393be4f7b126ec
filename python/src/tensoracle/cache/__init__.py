"""The engine cache: the open protocol (``protocol``), the identity of a saved engine
(``identity``), why an entry was built again (``rebuild``) and the remote tier shared by a fleet
(``remote``). The local store itself (locks, files, verification) is the C++ core's
(``tensoracle._core.Store``).

Importing this package imports none of its modules.
"""
