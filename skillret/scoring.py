"""Kept for callers of the earlier layout: scoring lives in :mod:`skillret.evaluator`, the
result type in :mod:`skillret.scores`."""

from __future__ import annotations

from .evaluator import Evaluator, check_overlap, evaluate_run, score
from .scores import Scores

__all__ = ["Evaluator", "Scores", "score", "evaluate_run", "check_overlap"]
