"""The cross-check: metrics a SkillRet results file carries, recomputed on the given qrels."""

from __future__ import annotations

import math

from skillret.scoring.results import QueryResults
from skillret.errors import ConfigError
from skillret.columnar.qrels import Qrels
from skillret.scoring.names import Metric, parse_metric
from skillret.scoring.profiles import RUN_JUDGED, Profile


def carried_metrics(run) -> tuple[list[Metric], dict]:
    metadata = getattr(run, "metadata", None) or {}
    carried = metadata.get("metrics") or {}
    metrics, known = [], {}
    for name, value in carried.items():
        try:
            metric = parse_metric(name)
        except ConfigError:  # a carried value that is not a metric we know
            continue
        metrics.append(metric)
        known[metric.short_name()] = value
    return metrics, known


def cross_check(qrels: Qrels, parts: list[QueryResults], metrics: list[Metric],
                carried: dict) -> dict:
    from skillret.scoring.aggregate import aggregate
    results = QueryResults.concat(parts, metrics, sorted({m.rel for m in metrics}))
    names = tuple(m.short_name() for m in metrics)
    profile = Profile("cross-check", names, query_set=RUN_JUDGED, rounding=5)
    recomputed = aggregate(profile, results, qrels)
    differences = {}
    for name, value in carried.items():
        mine = recomputed[name]
        if not math.isfinite(float(value)):  # kept as text: the report is strict JSON
            differences[name] = {"file": json_name(float(value)), "recomputed": mine}
        elif round(float(value), 5) != mine:
            differences[name] = {"file": float(value), "recomputed": mine}
    return {"checked": len(carried), "differ": len(differences), "differences": differences}


def json_name(value: float) -> str:
    """A non-finite number as JSON writers spell it: NaN, Infinity, -Infinity."""
    return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"


__all__ = ["carried_metrics", "cross_check"]
