"""Paired comparisons of runs' `PerQuery` values, within a revision or across two.

Paired over every judged query: an unanswered query scores 0, so dropping hard ones cannot help.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skillret.analysis.significance import CORRECTIONS, paired_tests, test_records
from skillret.errors import ConfigError, InputError
from skillret.io.per_query import PerQuery
from skillret.scoring.profiles import ALL_JUDGED

DEFAULT_METRICS = ("Recall@5", "NDCG@10", "Completeness@5", "MRR@5")  # the recommended profile
#: A significant difference is flagged when the run's Judged@K is at most this share of its
#: baseline's: its top K holds a fifth fewer judged skills (docs/tutorial/significance.md: why).
UNJUDGED_SHARE = 0.8
DEFAULTS = {"permutations": 10000, "bootstrap": 2000, "seed": 0, "correction": "holm",
            "alpha": 0.05}


@dataclass
class Comparison:
    """JSON-ready `result`; `pairs[run] = (baseline, run)` `{metric: values}` over `query_ids`;
    `shared_baseline`: one baseline for all runs (within a revision)."""

    result: dict
    query_ids: np.ndarray
    pairs: dict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]
    shared_baseline: bool = True


def align(tables: list[PerQuery]) -> tuple[np.ndarray, list[np.ndarray], list[str]]:
    """The common query ids, each table's rows for them, and notes on queries left out."""
    common = tables[0].query_ids
    for t in tables[1:]:  # tables of the same judgments hold the same ids: compared, not merged
        if not (len(t.query_ids) == len(common) and np.array_equal(t.query_ids, common)):
            common = np.intersect1d(common, t.query_ids)
    notes = [f"{t.source}: {len(t.query_ids) - len(common)} of its {len(t.query_ids)} queries "
             f"are not in every table and are left out of the pairing"
             for t in tables if len(t.query_ids) != len(common)]
    if not len(common):
        raise InputError(tables[0].source, f"no judged query in common with "
                                           f"{tables[1].source if len(tables) > 1 else 'itself'}")
    rows = [np.searchsorted(t.query_ids, common) for t in tables]
    return common, rows, notes


def compare(baseline: tuple[str, PerQuery], runs: dict[str, PerQuery], metrics: list[str],
            **settings) -> tuple[Comparison, list[str]]:
    """Every run against one baseline, one family; `settings` as `compare_pairs`'."""
    if not runs:
        raise ConfigError("nothing to compare: give at least one run besides the baseline")
    name, table = baseline
    return compare_pairs({n: (table, t) for n, t in runs.items()}, metrics,
                         baseline_label=name, **settings)


def compare_pairs(pairs: dict[str, tuple[PerQuery, PerQuery]], metrics: list[str], *,
                  baseline_label: str, permutations: int = 10000, bootstrap: int = 2000,
                  seed: int = 0, correction: str = "holm", alpha: float = 0.05,
                  rounding: int | None = 5, against: str | None = None,
                  revision: str | None = None) -> tuple[Comparison, list[str]]:
    """`{run: (baseline, run)}`: every (run, metric) in one family, same draws, randomization
    p-values adjusted over it. Returns the comparison and notes (queries left out)."""
    check_settings(permutations=permutations, bootstrap=bootstrap, seed=seed,
                   correction=correction, alpha=alpha)
    names = list(pairs)
    unique = list({id(t): t for n in names for t in pairs[n]}.values())
    ids, rows, notes = align(unique)
    row_of = {id(t): r for t, r in zip(unique, rows)}
    columns = {n: tuple({m: t.values[m][row_of[id(t)]] for m in metrics} for t in pairs[n])
               for n in names}
    keys = [(n, m) for n in names for m in metrics]
    stats = paired_tests(np.column_stack([columns[n][0][m] for n, m in keys]),
                         np.column_stack([columns[n][1][m] for n, m in keys]),
                         permutations=permutations, bootstrap=bootstrap, seed=seed)
    records = iter(test_records(stats, correction, alpha, rounding))  # in `keys`' order
    result = {"baseline": baseline_label, **{key: label for key, label in (
        ("revision", revision), ("against", against)) if label is not None}}
    result.update({
        "query_set": ALL_JUDGED,
        "queries": int(len(ids)),
        "tests": {"primary": "randomization", "randomization": stats[0]["randomization"],
                  "permutations": int(permutations), "bootstrap": int(bootstrap),
                  "seed": int(seed), "correction": correction, "alpha": float(alpha)},
        "runs": {n: {m: next(records) for m in metrics} for n in names},
    })
    return Comparison(result, ids, columns, shared_baseline=against is None), notes


def check_settings(*, permutations, bootstrap, seed, correction, alpha) -> None:
    for name, value, low in (("permutations", permutations, 1), ("bootstrap", bootstrap, 0),
                             ("seed", seed, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ConfigError(f"{name} must be an integer >= {low}, not {value!r}")
    if correction not in CORRECTIONS:
        raise ConfigError(f"unknown correction {correction!r} (known: {', '.join(CORRECTIONS)})")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ConfigError(f"alpha must be a number between 0 and 1, not {alpha!r}")


def flag_unjudged(result: dict, judged: dict[str, tuple[dict, dict]]) -> list[str]:
    """Beside each significant difference whose run leaves much more of its top K unjudged
    than its baseline (Judged@K at most `UNJUDGED_SHARE` of the baseline's): a note, also kept
    under `result["unjudged"]`. `judged`: run -> (the baseline's, the run's) `{"Judged@K": mean}`;
    a run or cutoff without values is not flagged."""
    notes = []
    for name, metrics in result["runs"].items():
        base, run = judged.get(name, ({}, {}))
        for metric, s in metrics.items():
            k = metric.rsplit("@", 1)[-1]
            key = f"Judged@{k}"
            if not s["significant"] or key not in base or key not in run or not base[key]:
                continue
            if run[key] <= UNJUDGED_SHARE * base[key]:
                notes.append(f"{name} {metric}: its top {k} holds {1 - run[key] / base[key]:.0%} "
                             f"fewer judged skills than the baseline's ({key} {run[key]:.5f} "
                             f"vs {base[key]:.5f}): unjudged skills count as not relevant")
    if notes:
        result["unjudged"] = notes
    return notes
