"""Comparing outputs: the measures (``measure``: ``compare_outputs``), the HTML report
(``report``) and its error plots (``plot``, which needs matplotlib).

Importing this package imports none of its modules.
"""
