"""One formatter and one parser for metric names, used everywhere: `NDCG@10`, `MRR(rel=2)@5`.

A metric is a measure, a relevance level and a cutoff. The relevance level is written only when
it is not the default (1), so the official names stay exactly SkillRet's (`NDCG@10`).
Names round-trip: `parse(format(m)) == m`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from skillret.errors import ConfigError
from skillret.measures import registry

DEFAULT_RELEVANCE_LEVEL = 1

#: The largest cutoff a metric may have. The engine lays rankings out as [queries x K] blocks, so
#: a cutoff is memory; 10,000 is ten times trec_eval's default depth (1,000) and far beyond any
#: SkillRet ranking (100), and it is checked before anything is allocated.
MAX_CUTOFF = 10_000

#: The largest relevance level: grades are 64-bit integers.
MAX_RELEVANCE_LEVEL = 2**63 - 1

_NAME = re.compile(r"^\s*([A-Za-z_]+)\s*(?:\(\s*rel\s*=\s*(-?\d+)\s*\))?\s*@\s*(\d+)\s*$")


class Metric(NamedTuple):
    """A measure at a cutoff, counting grades >= `rel` as relevant."""

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
    """Parse `NDCG@10` or `MRR(rel=2)@5`; `rel` supplies the level when the name has none.

    The cutoff must be 1..`MAX_CUTOFF` and the level 1..`MAX_RELEVANCE_LEVEL`; both
    are checked here, before anything is sized by them.
    """
    match = _NAME.match(str(name))
    if not match:
        raise ConfigError(f"metric {name!r} is not of the form Measure@K, e.g. NDCG@10 "
                          f"(measures: {', '.join(registry.names())})")
    raw, level, k = match.groups()
    measure = registry.lookup(raw)
    if measure is None:
        raise ConfigError(f"unknown measure {raw!r} in {name!r} "
                          f"(measures: {', '.join(registry.names())})")
    cutoff = _bounded(k, MAX_CUTOFF)
    if cutoff is None or cutoff < 1:
        raise ConfigError(f"cutoff of {name!r} must be an integer from 1 to {MAX_CUTOFF:,} "
                          f"(rankings are laid out K deep)")
    if level is None:
        level = DEFAULT_RELEVANCE_LEVEL if rel is None else rel
    try:
        level_value = check_level(level if isinstance(level, int) else _bounded(str(level),
                                                                                 MAX_RELEVANCE_LEVEL))
    except ConfigError:
        raise ConfigError(f"relevance level of {name!r} must be an integer from 1 to "
                          f"{MAX_RELEVANCE_LEVEL} (grade >= level counts as relevant; "
                          f"pytrec_eval refuses levels below 1)") from None
    return Metric(measure.name, cutoff, level_value)


def check_level(level) -> int:
    """A relevance level: an integer from 1 to `MAX_RELEVANCE_LEVEL` (grade >= level counts as
    relevant; pytrec_eval refuses levels below 1)."""
    if not isinstance(level, int) or isinstance(level, bool) or \
            not 1 <= level <= MAX_RELEVANCE_LEVEL:
        raise ConfigError(f"must be an integer from 1 to {MAX_RELEVANCE_LEVEL} (grade >= level "
                          f"counts as relevant)")
    return level


def metric_names(metrics) -> list[str]:
    """The canonical names (`NDCG@10`, `MRR(rel=2)@5`) of metrics given by name; a metric
    given twice is refused."""
    names = [format_metric(parse_metric(m)) for m in metrics]
    if len(set(names)) != len(names):
        raise ConfigError("a metric is listed twice")
    return names


def _bounded(digits: str, largest: int) -> int | None:
    """`int(digits)` when it spells an integer from 0 to `largest`, else None.

    The length is checked first, so a name with a million digits costs nothing.
    """
    text = digits.strip()
    significant = text.lstrip("0") or "0"
    if not text.isdecimal() or len(significant) > len(str(largest)):
        return None
    value = int(significant)
    return value if value <= largest else None
