"""The validation report: counts, warnings and their wording, from what the checks tallied."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from skillret.columnar import arrow
from skillret.scoring.aggregate import SPLITS, check_overlap
from skillret.scoring.results import QueryResults
from skillret.scoring.swaps import swap_warning
from skillret.columnar.qrels import Qrels

WRONG_SPLIT_HINT = f"a different qrels version or split? {SPLITS}"


def build_report(qrels: Qrels, tally, source, fmt_name, depth, notices,
                 judged: dict[str, float] | None = None) -> dict:
    """The report of a run's tally (its ``cross_check`` is added by :func:`add_cross_check`);
    ``judged``: Judged@K at the cutoffs in use (:func:`~skillret.validation.checks.judged_means`).
    """
    queries = pa.concat_arrays(tally.queries) if tally.queries else arrow.empty(pa.string())
    retrieved = np.concatenate(tally.retrieved) if tally.retrieved else np.zeros(0, np.int64)
    judged_index = np.concatenate(tally.judged_index) if tally.judged_index \
        else np.zeros(0, np.int64)
    results = QueryResults(queries, judged_index, retrieved, {})
    check_overlap(qrels, results, source)

    in_run, in_qrels = len(queries), len(qrels.queries)
    in_both = int((judged_index >= 0).sum())
    missing = in_qrels - in_both
    empty = int((retrieved == 0).sum())
    unjudged = in_run - in_both
    nonempty = retrieved[retrieved > 0]
    shallow = int(((retrieved > 0) & (retrieved < depth)).sum())
    where = source or "<run>"
    warnings: list[str] = []

    def warn(text, line=None):
        warnings.append(f"{where}{'' if line is None else f':{line}'}: {text}")

    if missing:
        present = np.zeros(in_qrels, bool)
        present[judged_index[judged_index >= 0]] = True
        example = qrels.queries[int(np.flatnonzero(~present)[0])].as_py()
        warn(f"{missing} judged quer{'y is' if missing == 1 else 'ies are'} missing from the run "
             f"(e.g. {example!r}); the official profile ignores them, all-judged profiles "
             f"score them 0")
    if empty:
        example = queries[int(np.flatnonzero(retrieved == 0)[0])].as_py()
        warn(f"{empty} quer{'y has' if empty == 1 else 'ies have'} an empty ranking "
             f"(e.g. {example!r}); they score 0")
    if unjudged:
        example = queries[int(np.flatnonzero(judged_index < 0)[0])].as_py()
        warn(f"{unjudged} run quer{'y has' if unjudged == 1 else 'ies have'} no judgments "
             f"(e.g. {example!r}) and {'is' if unjudged == 1 else 'are'} ignored")
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

    report = {
        "run": source,
        "format": fmt_name,
        "qrels": qrels.source,
        "status": "warnings" if warnings else "ok",
        "queries": {"in_run": in_run, "in_qrels": in_qrels, "in_both": in_both,
                    "missing": missing, "empty": empty, "unjudged": unjudged},
        "results": {
            "rows": int(retrieved.sum()),
            "min": int(nonempty.min()) if len(nonempty) else 0,
            "median": float(np.median(nonempty)) if len(nonempty) else 0.0,
            "max": int(nonempty.max()) if len(nonempty) else 0,
            "depth": int(depth),
            "shallow": shallow,
        },
        "judged": dict(judged or {}),
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
    return report


def add_cross_check(report: dict, cross: dict) -> None:
    """Put the cross-check (:func:`~skillret.validation.cross_check.cross_check`) in a report,
    its warning (metrics the file carries that these qrels do not reproduce) last."""
    report["cross_check"] = cross
    if cross["differ"]:
        names = ", ".join(f"{k} {v['file']} vs {v['recomputed']}"
                          for k, v in cross["differences"].items())
        report["warnings"].append(
            f"{report['run'] or '<run>'}: the metrics this file carries differ from those "
            f"recomputed on these qrels: {names} ({WRONG_SPLIT_HINT})")
        report["status"] = "warnings"


__all__ = ["build_report", "add_cross_check", "WRONG_SPLIT_HINT"]
