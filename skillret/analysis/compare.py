"""Paired comparisons of runs' `PerQuery` values, within a revision or across two, and the
results tables (runs x metrics) built on them.

Paired over every judged query: an unanswered query scores 0, so dropping hard ones cannot help.

A results table marks which runs each value beats significantly:
- pairwise: every pair `i < j` and metric is one test of `j` against `i`, one family;
  `a` beats `b` when significant and `a`'s mean is higher (superscript letters).
- against a `baseline`: `compare` itself; `+` significantly higher, `-` lower.

No bootstrap (p-values do not depend on it nor on a pair's direction). Best: the highest
rounded mean, ties all best.
"""

from __future__ import annotations

import itertools
import math
import string
from dataclasses import dataclass

import numpy as np

from skillret.analysis.significance import CORRECTIONS, paired_tests, rounded, test_records
from skillret.errors import ConfigError, InputError
from skillret.io.per_query import PerQuery
from skillret.scoring.profiles import ALL_JUDGED

DEFAULT_METRICS = ("Recall@5", "NDCG@10", "Completeness@5", "MRR@5")  # the recommended profile
#: A significant difference is flagged when the run's Judged@K is at most this share of its
#: baseline's: its top K holds a fifth fewer judged skills (docs/tutorial/significance.md: why).
UNJUDGED_SHARE = 0.8
DEFAULTS = {"permutations": 10000, "bootstrap": 2000, "seed": 0, "correction": "holm",
            "alpha": 0.05}
PAIRWISE = "pairwise"
BASELINE = "baseline"
HIGHER, LOWER = "+", "-"


@dataclass
class Comparison:
    """JSON-ready `result`; `pairs[run] = (baseline, run)` `{metric: values}` over `query_ids`;
    `shared_baseline`: one baseline for all runs (within a revision)."""

    result: dict
    query_ids: np.ndarray
    pairs: dict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]
    shared_baseline: bool = True


def compare(baseline: tuple[str, PerQuery], runs: dict[str, PerQuery], metrics: list[str],
            **settings) -> tuple[Comparison, list[str]]:
    """Every run against one baseline, one family; `settings` as `compare_pairs`'."""
    if not runs:
        raise ConfigError("nothing to compare: give at least one run besides the baseline")
    return compare_pairs({n: (baseline[1], t) for n, t in runs.items()}, metrics,
                         baseline_label=baseline[0], **settings)


def compare_pairs(pairs: dict[str, tuple[PerQuery, PerQuery]], metrics: list[str], *,
                  baseline_label: str, rounding: int | None = 5, against: str | None = None,
                  revision: str | None = None, **settings) -> tuple[Comparison, list[str]]:
    """`{run: (baseline, run)}`: every (run, metric) in one family, same draws, randomization
    p-values adjusted over it, on the queries every table holds; `settings`: any of `DEFAULTS`.
    Returns the comparison and notes (queries left out)."""
    settings = {**DEFAULTS, **settings}
    check_settings(**settings)
    names = list(pairs)
    tables = list({id(t): t for n in names for t in pairs[n]}.values())
    ids = tables[0].query_ids
    for t in tables[1:]:  # tables of the same judgments hold the same ids: compared, not merged
        if not (len(t.query_ids) == len(ids) and np.array_equal(t.query_ids, ids)):
            ids = np.intersect1d(ids, t.query_ids)
    notes = [f"{t.source}: {len(t.query_ids) - len(ids)} of its {len(t.query_ids)} queries "
             f"are not in every table and are left out of the pairing"
             for t in tables if len(t.query_ids) != len(ids)]
    if not len(ids):
        raise InputError(tables[0].source, f"no judged query in common with "
                                           f"{tables[1].source if len(tables) > 1 else 'itself'}")
    row_of = {id(t): np.searchsorted(t.query_ids, ids) for t in tables}
    columns = {n: tuple({m: t.values[m][row_of[id(t)]] for m in metrics} for t in pairs[n])
               for n in names}
    keys = [(n, m) for n in names for m in metrics]
    stats = paired_tests(np.column_stack([columns[n][0][m] for n, m in keys]),
                         np.column_stack([columns[n][1][m] for n, m in keys]),
                         permutations=settings["permutations"], bootstrap=settings["bootstrap"],
                         seed=settings["seed"])
    records = iter(test_records(stats, settings["correction"], settings["alpha"], rounding))
    result = {"baseline": baseline_label, **{key: label for key, label in (
        ("revision", revision), ("against", against)) if label is not None}}
    result.update({
        "query_set": ALL_JUDGED,
        "queries": int(len(ids)),
        "tests": {"primary": "randomization", "randomization": stats[0]["randomization"],
                  **settings, "alpha": float(settings["alpha"])},
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
            if (s["significant"] and base.get(key) and key in run
                    and run[key] <= UNJUDGED_SHARE * base[key]):
                notes.append(f"{name} {metric}: its top {k} holds {1 - run[key] / base[key]:.0%} "
                             f"fewer judged skills than the baseline's ({key} {run[key]:.5f} "
                             f"vs {base[key]:.5f}): unjudged skills count as not relevant")
    if notes:
        result["unjudged"] = notes
    return notes


def letters(count: int) -> list[str]:
    """`a` ... `z`, then `A` ... `Z`, then `aa`, `ab`, ... (spreadsheet order)."""
    longer = ("".join(p) for n in itertools.count(2)
              for p in itertools.product(string.ascii_lowercase, repeat=n))
    return list(itertools.islice(itertools.chain(
        string.ascii_lowercase + string.ascii_uppercase, longer), count))


@dataclass
class RunTable:
    """`values`: rounded fsum means over the paired queries; `beats` (pairwise, run order) /
    `markers` (baseline mode): per run and metric; `tests`: keyed by (baseline side, run side,
    metric); `settings`: compare's `tests` record."""

    mode: str
    runs: list[str]
    metrics: list[str]
    letters: dict[str, str]
    values: dict[str, dict[str, float]]
    best: dict[str, list[str]]
    tests: dict[tuple[str, str, str], dict]
    settings: dict
    queries: int
    source: str
    baseline: str | None
    rounding: int | None
    beats: dict[str, dict[str, list[str]]]
    markers: dict[str, dict[str, str]]

    @property
    def family(self) -> int:
        return len(self.tests)


def results_table(tables: dict, metrics: list[str], *, source: str, baseline: str | None = None,
                  rounding: int | None = 5, **settings) -> tuple[RunTable, list[str]]:
    """`tables`: `{run: PerQuery}` in table order; `settings`: `compare_pairs`' but `bootstrap`.
    The tests, means and marks of the module's results table; returns the table and notes."""
    runs = list(tables)
    if len(runs) < 2:
        raise ConfigError("a results table compares at least two runs "
                          f"(got {len(runs)}: {', '.join(runs) or 'none'})")
    if not metrics:
        raise ConfigError("no metric to report")
    mode = PAIRWISE if baseline is None else BASELINE
    if mode == BASELINE and baseline not in tables:
        raise ConfigError(f"--baseline: unknown run {baseline!r} (runs: {', '.join(runs)})")
    pairs = (list(itertools.combinations(runs, 2)) if mode == PAIRWISE
             else [(baseline, name) for name in runs if name != baseline])
    comparison, notes = compare_pairs({pair: (tables[pair[0]], tables[pair[1]]) for pair in pairs},
                                      metrics, baseline_label=baseline or "", bootstrap=0,
                                      rounding=rounding, **settings)
    tests = {(low, high, m): entry for (low, high), entries in comparison.result["runs"].items()
             for m, entry in entries.items()}
    means = {name: _means(values) for pair, sides in comparison.pairs.items()
             for name, values in zip(pair, sides)}
    values = {r: {m: rounded(means[r][m], rounding) for m in metrics} for r in runs}
    best = {m: [r for r in runs if values[r][m] == max(values[q][m] for q in runs)]
            for m in metrics}
    beats: dict[str, dict[str, list[str]]] = {r: {m: [] for m in metrics} for r in runs}
    markers = {r: {m: "" for m in metrics} for r in runs}
    for (low, high, m), entry in tests.items():  # pairwise: losers come in run order
        if entry["significant"] and means[low][m] != means[high][m]:
            higher = means[high][m] > means[low][m]
            beats[high if higher else low][m].append(low if higher else high)
            markers[high][m] = HIGHER if higher else LOWER
    return RunTable(mode, runs, list(metrics), dict(zip(runs, letters(len(runs)))), values,
                    best, tests, comparison.result["tests"], len(comparison.query_ids), source,
                    baseline, rounding, beats, markers), notes


@dataclass
class RevisionSummary:
    """`comparison`: old vs new of the runs at both (None if none); `added`/`removed`: means."""

    old: str
    new: str
    metrics: list[str]
    comparison: object | None
    added: dict[str, dict[str, float]]
    removed: dict[str, dict[str, float]]


def revision_summary(old: str, new: str, before: dict, after: dict, metrics: list[str],
                     **settings) -> tuple[RevisionSummary, list[str]]:
    """`before`/`after`: `{run: PerQuery}`; `settings`: `compare_pairs`'."""
    rounding = settings.get("rounding", 5)
    common = [n for n in after if n in before]
    added = {n: _means(after[n].values, metrics, rounding) for n in after if n not in before}
    removed = {n: _means(before[n].values, metrics, rounding) for n in before if n not in after}
    comparison, notes = None, []
    if common:
        comparison, notes = compare_pairs({n: (before[n], after[n]) for n in common}, metrics,
                                          baseline_label=old, against=new, **settings)
    elif not added and not removed:
        raise ConfigError(f"no run at {old} nor at {new}")
    return RevisionSummary(old, new, list(metrics), comparison, added, removed), notes


def _means(values: dict[str, np.ndarray], metrics=None, rounding: int | None = None
           ) -> dict[str, float]:
    """fsum / n of each metric's values (all of `values`' by default)."""
    return {m: rounded(math.fsum(values[m]) / len(values[m]), rounding)
            for m in (metrics or values)}
