"""Scoring: the tie rule (``ordering``), judgment lookups, the vectorized engine, metric names,
profiles, aggregation into a profile's numbers, and the ``Evaluator`` that ties them together.
Internal; the public API is what ``skillret/__init__.py`` exports.
"""
