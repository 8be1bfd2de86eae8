"""The validation report: counts, warnings and their wording, from what the checks tallied; and
the cross-check of the metrics a SkillRet results file carries, recomputed on the given qrels."""

from __future__ import annotations

import math

import numpy as np

from skillret.columnar.qrels import Qrels
from skillret.errors import ConfigError
from skillret.scoring.aggregate import SPLITS, QueryResults, aggregate, check_overlap, count_queries
from skillret.scoring.names import Metric, parse_metric
from skillret.scoring.profiles import RUN_JUDGED, Profile
from skillret.scoring.swaps import swap_warning

WRONG_SPLIT_HINT = f"a different qrels version or split? {SPLITS}"


def build_report(qrels: Qrels, tally, results: QueryResults, source, fmt_name, depth, notices,
                 judged: dict[str, float]) -> dict:
    """The report of a run's tally and per-query `results` (its ``cross_check`` is added by
    :func:`add_cross_check`); ``judged``: Judged@K at the cutoffs in use."""
    check_overlap(qrels, results, source)
    counts = count_queries(results, qrels)
    queries, judged_index, retrieved = results.queries, results.judged_index, results.retrieved
    nonempty = retrieved[retrieved > 0]
    shallow = int(((retrieved > 0) & (retrieved < depth)).sum())
    where = source or "<run>"
    warnings: list[str] = []

    def warn(text, line=None):
        warnings.append(f"{where}{'' if line is None else f':{line}'}: {text}")

    def example(ids, mask):
        return ids[int(np.flatnonzero(mask)[0])].as_py()

    if counts.missing:
        absent = ~np.isin(np.arange(counts.judged), judged_index)
        warn(f"{counts.missing} judged quer{'y is' if counts.missing == 1 else 'ies are'} missing "
             f"from the run (e.g. {example(qrels.queries, absent)!r}); the official profile "
             f"ignores them, all-judged profiles score them 0")
    if counts.empty:
        warn(f"{counts.empty} quer{'y has' if counts.empty == 1 else 'ies have'} an empty ranking "
             f"(e.g. {example(queries, retrieved == 0)!r}); they score 0")
    if counts.unjudged:
        one = counts.unjudged == 1
        warn(f"{counts.unjudged} run quer{'y has' if one else 'ies have'} no judgments "
             f"(e.g. {example(queries, judged_index < 0)!r}) and {'is' if one else 'are'} "
             f"ignored")
    if shallow:
        warn(f"{shallow} quer{'y retrieves' if shallow == 1 else 'ies retrieve'} fewer than "
             f"{depth} results, the largest cutoff; missing ranks count as non-relevant")
    if tally.tie_queries:
        warn(f"{tally.tie_queries} quer{'y has' if tally.tie_queries == 1 else 'ies have'} tied "
             f"scores ({tally.tie_queries_in_depth} within the top {depth}); ties are broken by "
             f"skill id, descending, as trec_eval does", tally.first_tie_line)
    swapped = swap_warning(tally.swaps, source, fmt_name)
    if swapped:
        warnings.append(swapped)
    elif tally.rank_rows:
        warn(f"the rank column disagrees with the score order on {tally.rank_rows} rows in "
             f"{tally.rank_queries} quer{'y' if tally.rank_queries == 1 else 'ies'}; ranks are "
             f"ignored, results are ordered by score (as trec_eval does)", tally.first_rank_line)
    extra = tally.extra_fields
    if extra:
        warn(f"{extra} line{'s have' if extra != 1 else ' has'} fields after the run tag; they "
             f"are ignored (as trec_eval does)")
    if qrels.duplicates:
        warnings.append(f"{qrels.source or '<qrels>'}: {qrels.duplicates} duplicate "
                        f"judgment{'s' if qrels.duplicates != 1 else ''} (same query, skill and "
                        f"grade) dropped")

    return {
        "run": source,
        "format": fmt_name,
        "qrels": qrels.source,
        "status": "warnings" if warnings else "ok",
        "queries": {"in_run": counts.in_run, "in_qrels": counts.judged,
                    "in_both": counts.in_both, "missing": counts.missing, "empty": counts.empty,
                    "unjudged": counts.unjudged},
        "results": {
            "rows": int(retrieved.sum()),
            "min": int(nonempty.min()) if len(nonempty) else 0,
            "median": float(np.median(nonempty)) if len(nonempty) else 0.0,
            "max": int(nonempty.max()) if len(nonempty) else 0,
            "depth": int(depth),
            "shallow": shallow,
        },
        "judged": judged,
        "ties": {"queries": tally.tie_queries, "queries_within_depth": tally.tie_queries_in_depth,
                 "pairs": tally.tie_pairs},
        "rank_column": {"present": tally.rank_present, "disagreeing_rows": tally.rank_rows,
                        "disagreeing_queries": tally.rank_queries},
        "swapped_columns": tally.swaps.as_dict(),
        "extra_fields": extra,
        "qrels_duplicates_dropped": int(qrels.duplicates),
        "cross_check": None,
        "warnings": warnings,
        "notices": notices,
    }


def carried_metrics(run) -> tuple[list[Metric], dict]:
    """The metrics a SkillRet results file carries that name a known metric, and their values."""
    carried = (getattr(run, "metadata", None) or {}).get("metrics") or {}
    metrics, known = [], {}
    for name, value in carried.items():
        try:
            metric = parse_metric(name)
        except ConfigError:  # a carried value that is not a metric we know
            continue
        metrics.append(metric)
        known[metric.short_name()] = value
    return metrics, known


def add_cross_check(report: dict, qrels: Qrels, results: QueryResults, metrics: list[Metric],
                    carried: dict) -> None:
    """Put the cross-check of the `carried` values in a report, its warning (metrics the file
    carries that these qrels do not reproduce) last."""
    profile = Profile("cross-check", tuple(m.short_name() for m in metrics),
                      query_set=RUN_JUDGED, rounding=5)
    recomputed = aggregate(profile, results, qrels)
    differences = {}
    for name, value in carried.items():
        mine, number = recomputed[name], float(value)
        if not math.isfinite(number):  # kept as text: the report is strict JSON
            text = "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"
            differences[name] = {"file": text, "recomputed": mine}
        elif round(number, 5) != mine:
            differences[name] = {"file": number, "recomputed": mine}
    report["cross_check"] = {"checked": len(carried), "differ": len(differences),
                             "differences": differences}
    if differences:
        names = ", ".join(f"{k} {v['file']} vs {v['recomputed']}"
                          for k, v in differences.items())
        report["warnings"].append(
            f"{report['run'] or '<run>'}: the metrics this file carries differ from those "
            f"recomputed on these qrels: {names} ({WRONG_SPLIT_HINT})")
        report["status"] = "warnings"
