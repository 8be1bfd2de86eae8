"""Results tables (runs x metrics) marking which runs each value beats significantly.

- `pairwise_table`: every pair `i < j` and metric is one test of `j` against `i`, one family;
  `a` beats `b` when significant and `a`'s mean is higher (superscript letters).
- `baseline_table`: `compare` itself; `+` significantly higher, `-` lower.

No bootstrap (p-values do not depend on it nor on a pair's direction). Best: the highest
rounded mean, ties all best.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field

import numpy as np

from skillret.analysis.compare import align, check_settings, compare, compare_pairs
from skillret.analysis.significance import (paired_tests, rounded, sign_flip_p_pairs, streams,
                                            test_records)
from skillret.errors import ConfigError

PAIRWISE = "pairwise"
BASELINE = "baseline"
HIGHER, LOWER = "+", "-"


def letters(count: int) -> list[str]:
    """`a` ... `z`, then `A` ... `Z`, then `aa`, `ab`, ... (spreadsheet order)."""
    out = list((string.ascii_lowercase + string.ascii_uppercase)[:count])
    for k in range(27, 27 + count - len(out)):  # bijective base 26: 27 is "aa"
        text = ""
        while k:
            k, digit = divmod(k - 1, 26)
            text = string.ascii_lowercase[digit] + text
        out.append(text)
    return out


@dataclass
class RunTable:
    """`means`: fsum means over the paired queries; `values`: rounded; `beats` (pairwise, run
    order) / `markers` (baseline mode): per run and metric; `tests`: keyed by (baseline side,
    run side, metric); `settings`: compare's `tests` record."""

    mode: str
    runs: list[str]
    metrics: list[str]
    letters: dict[str, str]
    means: dict[str, dict[str, float]]
    values: dict[str, dict[str, float]]
    best: dict[str, list[str]]
    tests: dict[tuple[str, str, str], dict]
    settings: dict
    queries: int
    source: str
    baseline: str | None = None
    rounding: int | None = 5
    beats: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    markers: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def family(self) -> int:
        return len(self.tests)


def _run_table(mode: str, tables: dict, metrics: list[str], ids: np.ndarray, tests: dict,
               settings: dict, source: str, rounding: int | None,
               baseline: str | None = None) -> RunTable:
    """The table of `tests` (`{(low, high, metric): entry}`): fsum / n means over `ids`, the
    highest rounded ones best, and who beats whom (pairwise) or `+` / `-` (baseline)."""
    runs = list(tables)
    means = {name: _means(table, ids, metrics) for name, table in tables.items()}
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
    return RunTable(mode, runs, list(metrics), dict(zip(runs, letters(len(runs)))), means,
                    values, best, tests, settings, len(ids), source, baseline=baseline,
                    rounding=rounding, beats=beats, markers=markers)


def _check_runs(tables: dict, metrics: list[str]) -> list[str]:
    runs = list(tables)
    if len(runs) < 2:
        raise ConfigError("a results table compares at least two runs "
                          f"(got {len(runs)}: {', '.join(runs) or 'none'})")
    if not metrics:
        raise ConfigError("no metric to report")
    return runs


def pairwise_tests(tables: dict, metrics: list[str], *, permutations: int = 10000,
                   seed: int = 0, correction: str = "holm", alpha: float = 0.05,
                   rounding: int | None = 5) -> tuple[dict, np.ndarray, dict, list[str]]:
    """`compare_pairs`' entries for every pair `i < j` and metric, one family, `bootstrap=0`.
    Returns `{(low, high, metric): entry}`, the paired ids, the `tests` record and notes."""
    check_settings(permutations=permutations, bootstrap=0, seed=seed, correction=correction,
                   alpha=alpha)
    runs = list(tables)
    ids, rows, notes = align([tables[r] for r in runs])
    n = len(ids)
    pairs = [(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    # metric-major: column k * len(runs) + r
    values = np.column_stack([tables[r].values[m][row] for m in metrics
                              for r, row in zip(runs, rows)])
    width = len(runs)
    low = np.array([k * width + i for i, j in pairs for k in range(len(metrics))], np.int64)
    high = np.array([k * width + j for i, j in pairs for k in range(len(metrics))], np.int64)
    exact = 2 ** n <= permutations
    p_rand = None if exact else sign_flip_p_pairs(values, low, high, permutations,
                                                  streams(seed)[0])
    stats = paired_tests(values[:, low], values[:, high], permutations=permutations,
                         bootstrap=0, seed=seed, p_randomization=p_rand)
    keys = [(runs[i], runs[j], m) for i, j in pairs for m in metrics]
    out = dict(zip(keys, test_records(stats, correction, alpha, rounding)))
    tests = {"primary": "randomization", "randomization": "exact" if exact else "monte-carlo",
             "permutations": int(permutations), "bootstrap": 0, "seed": int(seed),
             "correction": correction, "alpha": float(alpha)}
    return out, ids, tests, notes


def pairwise_table(tables: dict, metrics: list[str], *, source: str, permutations: int = 10000,
                   seed: int = 0, correction: str = "holm", alpha: float = 0.05,
                   rounding: int | None = 5) -> tuple[RunTable, list[str]]:
    """`tables`: `{run: PerQuery}` in table order. Returns the table and notes."""
    _check_runs(tables, metrics)
    tests, ids, record, notes = pairwise_tests(tables, metrics, permutations=permutations,
                                               seed=seed, correction=correction, alpha=alpha,
                                               rounding=rounding)
    return _run_table(PAIRWISE, tables, metrics, ids, tests, record, source, rounding), notes


def baseline_table(tables: dict, baseline: str, metrics: list[str], *, source: str,
                   permutations: int = 10000, seed: int = 0, correction: str = "holm",
                   alpha: float = 0.05, rounding: int | None = 5) -> tuple[RunTable, list[str]]:
    """Every other run against `baseline`; returns the table and notes."""
    runs = _check_runs(tables, metrics)
    if baseline not in tables:
        raise ConfigError(f"--baseline: unknown run {baseline!r} (runs: {', '.join(runs)})")
    others = {n: t for n, t in tables.items() if n != baseline}
    comparison, notes = compare((baseline, tables[baseline]), others, metrics,
                                permutations=permutations, bootstrap=0, seed=seed,
                                correction=correction, alpha=alpha, rounding=rounding)
    tests = {(baseline, name, m): entry for name, entries in comparison.result["runs"].items()
             for m, entry in entries.items()}
    return _run_table(BASELINE, tables, metrics, comparison.query_ids, tests,
                      comparison.result["tests"], source, rounding, baseline), notes


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
    added = {n: _table_means(after[n], metrics, rounding) for n in after if n not in before}
    removed = {n: _table_means(before[n], metrics, rounding) for n in before if n not in after}
    comparison, notes = None, []
    if common:
        comparison, notes = compare_pairs({n: (before[n], after[n]) for n in common}, metrics,
                                          baseline_label=old, against=new, **settings)
    elif not added and not removed:
        raise ConfigError(f"no run at {old} nor at {new}")
    return RevisionSummary(old, new, list(metrics), comparison, added, removed), notes


def _means(table, ids: np.ndarray, metrics: list[str]) -> dict[str, float]:
    rows = np.searchsorted(table.query_ids, ids)
    return {m: math.fsum(table.values[m][rows]) / len(ids) for m in metrics}


def _table_means(table, metrics: list[str], rounding: int | None) -> dict[str, float]:
    return {m: rounded(v, rounding) for m, v in _means(table, table.query_ids, metrics).items()}
