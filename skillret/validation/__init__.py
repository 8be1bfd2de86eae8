"""Validation of a run against the qrels before it is scored: the checks (``checks``), the
report and its wording (``report``), and the cross-check of a results file's stored metrics.
Internal; the public API is what ``skillret/__init__.py`` exports.
"""
