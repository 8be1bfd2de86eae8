"""One formatter and one parser for metric names, used everywhere: `NDCG@10`, `MRR(rel=2)@5`.

A metric is a measure, a cutoff (None: the whole ranking, `NDCG`) and a relevance level, written
only when it is not the default (1). Names round-trip: `parse(format(m)) == m`. The parser also
takes other tools' names (any case: `nDCG@10`, `ndcg_cut_10`, `ndcg_cut.10`, `hit_rate@5`, from
the registry); the metric's name is the canonical one.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from skillret.errors import ConfigError
from skillret.measures import registry

DEFAULT_RELEVANCE_LEVEL = 1

#: The largest cutoff: the engine lays rankings out as [queries x K] blocks, so a cutoff is memory
#: (ten times trec_eval's default depth, far beyond any SkillRet ranking).
MAX_CUTOFF = 10_000

#: The largest relevance level: grades are 64-bit integers.
MAX_RELEVANCE_LEVEL = 2**63 - 1

#: `Name`, `Name@K`, `Name(rel=N)`, `Name(rel=N)@K` (ours, ir_measures', ranx's); `Name_K`,
#: `Name.K` (trec_eval's and pytrec_eval's)
_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z_\-]*?)(?:\s*(?:\(\s*(?i:rel)\s*=\s*(-?\d+)\s*\))?"
                   r"\s*(?:@\s*(\d+))?|[_.](\d+))\s*$")
_FORMS = "NDCG@10, P(rel=2)@5, ndcg_cut_10, NDCG or RPrec"


class Metric(NamedTuple):
    """A measure at a cutoff (None: the whole ranking), counting grades >= `rel` as relevant."""

    measure: str
    k: int | None
    rel: int = DEFAULT_RELEVANCE_LEVEL

    @property
    def name(self) -> str:
        return format_metric(self)

    def short_name(self) -> str:
        """The name without the relevance level, as a profile's output keys read."""
        return self.measure if self.k is None else f"{self.measure}@{self.k}"


def format_metric(metric: Metric) -> str:
    rel = "" if metric.rel == DEFAULT_RELEVANCE_LEVEL else f"(rel={metric.rel})"
    return metric.measure + rel + ("" if metric.k is None else f"@{metric.k}")


def parse_metric(name: str, *, rel: int | None = None) -> Metric:
    """Parse `NDCG@10`, `MRR(rel=2)@5`, `NDCG` or another tool's name of a metric; `rel`
    supplies the level when the name has none. Cutoff and level are checked here, before
    anything is sized by them."""
    text = str(name)
    match = _NAME.match(text)
    if match is None:
        raise ConfigError(f"metric {text!r} is not a metric name such as {_FORMS} "
                          f"(measures: {', '.join(registry.names())})")
    raw, level, k, trec_k = match.groups()
    k = k or trec_k
    measure = registry.lookup(raw)
    if measure is None:
        meanings = registry.AMBIGUOUS.get(raw.lower())
        if meanings:
            raise ConfigError(f"measure {raw!r} in {text!r} is ambiguous: it could mean "
                              f"{' or '.join(meanings)}; write the measure's own name")
        raise ConfigError(f"unknown measure {raw!r} in {text!r} (measures: "
                          f"{', '.join(registry.names())}; `skillret-eval measures` lists "
                          f"every accepted name)")
    may_cut, may_be_whole = measure.forms()[raw.lower()]
    if k is None and not may_be_whole:
        raise ConfigError(f"metric {text!r} needs a cutoff: {raw}@K, e.g. {raw}@10")
    if k is not None and not may_cut:
        plain = "" if raw == measure.name else f" ({measure.name})"
        cut = f"; with a cutoff, write {measure.name}@{k}" if measure.cutoff else \
            " (it reads the whole ranking)"
        raise ConfigError(f"metric {text!r}: {raw}{plain} takes no cutoff{cut}")
    cutoff = None if k is None else _bounded(k, MAX_CUTOFF)
    if k is not None and (cutoff is None or cutoff < 1):
        raise ConfigError(f"cutoff of {text!r} must be an integer from 1 to {MAX_CUTOFF:,} "
                          f"(rankings are laid out K deep)")
    if level is None:
        level = DEFAULT_RELEVANCE_LEVEL if rel is None else rel
    try:  # the one rule, `check_level`; the message names the metric
        level = check_level(level if isinstance(level, int) else _bounded(str(level),
                                                                           MAX_RELEVANCE_LEVEL))
    except ConfigError:
        raise ConfigError(f"relevance level of {text!r} must be an integer from 1 to "
                          f"{MAX_RELEVANCE_LEVEL} (grade >= level counts as relevant; "
                          f"pytrec_eval refuses levels below 1)") from None
    return Metric(measure.name, cutoff, level)


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
    """`int(digits)` when it spells an integer from 0 to `largest`, else None (the length
    checked first, so a million digits cost nothing)."""
    text = digits.strip()
    significant = text.lstrip("0") or "0"
    if not text.isdecimal() or len(significant) > len(str(largest)):
        return None
    value = int(significant)
    return value if value <= largest else None
