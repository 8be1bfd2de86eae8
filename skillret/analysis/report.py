"""Results tables (runs x metrics) marking which runs each value beats significantly.

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
from dataclasses import dataclass, field

import numpy as np

from skillret.analysis.compare import compare_pairs
from skillret.analysis.significance import rounded
from skillret.errors import ConfigError

PAIRWISE = "pairwise"
BASELINE = "baseline"
HIGHER, LOWER = "+", "-"


def letters(count: int) -> list[str]:
    """`a` ... `z`, then `A` ... `Z`, then `aa`, `ab`, ... (spreadsheet order)."""
    longer = ("".join(p) for n in itertools.count(2)
              for p in itertools.product(string.ascii_lowercase, repeat=n))
    return list(itertools.islice(itertools.chain(
        string.ascii_lowercase + string.ascii_uppercase, longer), count))


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


def results_table(tables: dict, metrics: list[str], *, source: str, baseline: str | None = None,
                  rounding: int | None = 5, **settings) -> tuple[RunTable, list[str]]:
    """`tables`: `{run: PerQuery}` in table order; `settings`: `compare_pairs`' but `bootstrap`.
    Each pair and metric is one test of the later run against the earlier (pairwise) or of a run
    against `baseline` (`compare` itself), in one family (`compare_pairs`, `bootstrap=0`); then
    the table: fsum / n means over the paired queries, the highest rounded ones best, and who
    beats whom (pairwise) or `+` / `-` (baseline). Returns the table and notes."""
    runs = list(tables)
    if len(runs) < 2:
        raise ConfigError("a results table compares at least two runs "
                          f"(got {len(runs)}: {', '.join(runs) or 'none'})")
    if not metrics:
        raise ConfigError("no metric to report")
    mode = PAIRWISE if baseline is None else BASELINE
    if mode == BASELINE and baseline not in tables:
        raise ConfigError(f"--baseline: unknown run {baseline!r} (runs: {', '.join(runs)})")
    pairs = ([(low, high) for i, low in enumerate(runs) for high in runs[i + 1:]]
             if mode == PAIRWISE else [(baseline, name) for name in runs if name != baseline])
    comparison, notes = compare_pairs({pair: (tables[pair[0]], tables[pair[1]]) for pair in pairs},
                                      metrics, baseline_label=baseline or "", bootstrap=0,
                                      rounding=rounding, **settings)
    tests = {(low, high, m): entry for (low, high), entries in comparison.result["runs"].items()
             for m, entry in entries.items()}
    ids = comparison.query_ids
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
    table = RunTable(mode, runs, list(metrics), dict(zip(runs, letters(len(runs)))), means,
                     values, best, tests, comparison.result["tests"], len(ids), source,
                     baseline=baseline, rounding=rounding, beats=beats, markers=markers)
    return table, notes


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
