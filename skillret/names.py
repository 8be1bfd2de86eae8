"""One formatter and one parser for metric names, used everywhere: ``NDCG@10``, ``MRR(rel=2)@5``.

A metric is a measure, a relevance level and a cutoff. The relevance level is written only when
it is not the default (1), so the official names stay exactly SkillRet's (``NDCG@10``).
Names round-trip: ``parse(format(m)) == m``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .errors import ConfigError

MEASURES = ("NDCG", "MAP", "Recall", "Precision", "Completeness", "MRR")
DEFAULT_RELEVANCE_LEVEL = 1

_ALIASES = {m.lower(): m for m in MEASURES} | {
    "ndcg_cut": "NDCG",
    "map_cut": "MAP",
    "p": "Precision",
    "r": "Recall",
    "recip_rank": "MRR",
    "rr": "MRR",
}
_NAME = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*rel\s*=\s*(-?\d+)\s*\))?\s*@\s*(\d+)\s*$")


class Metric(NamedTuple):
    """A measure at a cutoff, counting grades >= ``rel`` as relevant."""

    measure: str
    k: int
    rel: int = DEFAULT_RELEVANCE_LEVEL

    @property
    def name(self) -> str:
        return format_metric(self)

    def short_name(self) -> str:
        """The name without the relevance level, as a profile's output keys read."""
        return f"{self.measure}@{self.k}"


def format_metric(metric: Metric) -> str:
    rel = "" if metric.rel == DEFAULT_RELEVANCE_LEVEL else f"(rel={metric.rel})"
    return f"{metric.measure}{rel}@{metric.k}"


def parse_metric(name: str, *, rel: int | None = None) -> Metric:
    """Parse ``NDCG@10`` or ``MRR(rel=2)@5``; ``rel`` supplies the level when the name has none."""
    match = _NAME.match(str(name))
    if not match:
        raise ConfigError(f"metric {name!r} is not of the form Measure@K, e.g. NDCG@10 "
                          f"(measures: {', '.join(MEASURES)})")
    raw, level, k = match.groups()
    measure = _ALIASES.get(raw.lower())
    if measure is None:
        raise ConfigError(f"unknown measure {raw!r} in {name!r} (measures: {', '.join(MEASURES)})")
    if int(k) < 1:
        raise ConfigError(f"cutoff of {name!r} must be a positive integer")
    if level is not None:
        level_value = int(level)
    else:
        level_value = DEFAULT_RELEVANCE_LEVEL if rel is None else int(rel)
    if level_value < 1:
        raise ConfigError(f"relevance level of {name!r} must be >= 1 (grade >= level counts "
                          f"as relevant; pytrec_eval refuses levels below 1)")
    return Metric(measure, int(k), level_value)
