"""The measures, one module each; this registry maps a measure's name to its kernel.

A kernel is a pure function ``compute(ranking, k, rel) -> float64[n_queries]`` over a
:class:`~skillret.measures.base.Ranking`; its module docstring states the formula and edge cases.
"""

from __future__ import annotations

from . import average_precision, completeness, ndcg, precision, recall, reciprocal_rank
from .base import Ranking, log2_discounts

KERNELS = {
    "NDCG": ndcg.compute,
    "MAP": average_precision.compute,
    "Recall": recall.compute,
    "Precision": precision.compute,
    "Completeness": completeness.compute,
    "MRR": reciprocal_rank.compute,
}

DEFINITIONS = {
    "NDCG": ndcg.__doc__,
    "MAP": average_precision.__doc__,
    "Recall": recall.__doc__,
    "Precision": precision.__doc__,
    "Completeness": completeness.__doc__,
    "MRR": reciprocal_rank.__doc__,
}

__all__ = ["KERNELS", "DEFINITIONS", "Ranking", "log2_discounts"]
