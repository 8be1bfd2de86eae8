"""Is the difference real? Paired comparisons of runs, within a revision or across two.

Per-query values come from one of two places, and everything after that is shared:

- run files: scored here, through the public API (:func:`per_query_values`, the one adapter to
  the engine), over every judged query;
- per-query tables the pipeline wrote (``score`` stage), in the workspace or at a git revision
  through DVC (:mod:`skillret.pipeline.revisions`).

Pairing is over every judged query: a query a run does not answer (or answers with an empty
ranking) scores 0 there, the ``all-judged`` query set, the one pairing in which dropping hard
queries cannot help. The output says so (``"query_set": "all-judged"``). The statistics are in
:mod:`skillret.analysis.significance`; this module pairs, adjusts over the family, rounds and renders.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from skillret.errors import ConfigError, InputError

QUERY_SET = "all-judged"
DEFAULT_METRICS = ("Recall@5", "NDCG@10", "Completeness@5", "MRR@5")  # the recommended profile
DEFAULTS = {"permutations": 10000, "bootstrap": 2000, "seed": 0, "correction": "holm",
            "alpha": 0.05}
GAINS_SHOWN = 5


@dataclass
class PerQuery:
    """One run's per-query values: query ids (sorted, unique) and one array per metric."""

    query_ids: np.ndarray
    values: dict[str, np.ndarray]
    source: str


@dataclass
class Comparison:
    """What :func:`compare` found: the JSON-ready result plus the paired arrays for reports.

    ``pairs[run] = (baseline values, run values)``, one array per metric, over ``query_ids``.
    ``shared_baseline``: every run has the same baseline (within a revision), not its own
    (across revisions).
    """

    result: dict
    query_ids: np.ndarray
    pairs: dict[str, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = field(
        default_factory=dict)
    shared_baseline: bool = True


def metric_names(metrics) -> list[str]:
    """Canonical names (``NDCG@10``, ``MRR(rel=2)@5``) of metrics given as names."""
    from skillret.scoring.names import format_metric, parse_metric

    names = [format_metric(parse_metric(m)) for m in metrics]
    if len(set(names)) != len(names):
        raise ConfigError("a metric is listed twice")
    return names


def per_query_values(qrels, run, metrics: list[str], source: str) -> PerQuery:
    """The adapter to the engine: score ``run`` and take its per-query table.

    ``Scores.per_query_columns()`` is the table the pipeline writes (every judged query, a query
    missing from the run scoring 0), so run files and pipeline tables give the same values.
    """
    from skillret.scoring.profiles import Profile
    from skillret.scoring.names import parse_metric
    from skillret.scoring.evaluator import score

    parsed = [parse_metric(m) for m in metrics]
    levels = sorted({m.rel for m in parsed})
    profiles = [Profile(f"compare-rel{level}",
                        tuple(m.short_name() for m in parsed if m.rel == level),
                        query_set=QUERY_SET, relevance_level=level) for level in levels]
    columns = score(qrels, run, profiles).per_query_columns()
    return PerQuery(np.asarray(columns["query_id"]).astype(str),
                    {m: np.asarray(columns[m], dtype=np.float64) for m in metrics}, source)


def read_table(handle, metrics: list[str], source: str, *, parquet: bool = False) -> PerQuery:
    """A per-query table (TSV with a header, or Parquet) as the score stage writes it."""
    import pyarrow as pa

    try:
        if parquet:
            import pyarrow.parquet as pq
            table = pq.read_table(handle)
        else:
            import pyarrow.csv as pacsv
            table = pacsv.read_csv(handle, parse_options=pacsv.ParseOptions(delimiter="\t"),
                                   convert_options=pacsv.ConvertOptions(
                                       column_types={"query_id": pa.string()}))
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(source, f"not a per-query table ({str(exc).splitlines()[0]})") from None
    names = table.column_names
    if "query_id" not in names:
        raise InputError(source, "not a per-query table: no query_id column")
    missing = [m for m in metrics if m not in names]
    if missing:
        have = [c for c in names if "@" in c]
        raise InputError(source, f"no per-query values of {', '.join(missing)} "
                                 f"(the table has {', '.join(have) or 'no metric'})",
                         hint="add a profile with it to eval.profiles and run dvc repro")
    ids = np.asarray(table.column("query_id").to_pylist(), dtype=object).astype(str)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    if len(ids) > 1 and (ids[1:] == ids[:-1]).any():
        raise InputError(source, "a query id appears twice in the per-query table")
    values = {}
    for m in metrics:
        column = table.column(m)
        if column.null_count:
            raise InputError(source, f"column {m} has empty values")
        values[m] = np.asarray(column.to_numpy(), dtype=np.float64)[order]
    return PerQuery(ids, values, source)


def read_table_file(path: str | os.PathLike, metrics: list[str]) -> PerQuery:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such per-query table", hint="run dvc repro")
    return read_table(str(path), metrics, str(path),
                      parquet=path.suffix.lower() in (".parquet", ".pq"))


def align(tables: list[PerQuery]) -> tuple[np.ndarray, list[np.ndarray], list[str]]:
    """The queries every table holds, and each table's rows for them, in query-id order.

    Returns the ids, one row index array per table, and notes on queries left out.
    """
    common = tables[0].query_ids
    for t in tables[1:]:
        common = np.intersect1d(common, t.query_ids)
    notes = []
    for t in tables:
        if len(t.query_ids) != len(common):
            notes.append(f"{t.source}: {len(t.query_ids) - len(common)} of its "
                         f"{len(t.query_ids)} queries are not in every table and are left out "
                         f"of the pairing")
    if not len(common):
        raise InputError(tables[0].source, f"no judged query in common with "
                                           f"{tables[1].source if len(tables) > 1 else 'itself'}")
    rows = [np.searchsorted(t.query_ids, common) for t in tables]
    return common, rows, notes


def compare(baseline: tuple[str, PerQuery], runs: dict[str, PerQuery], metrics: list[str],
            **settings) -> tuple[Comparison, list[str]]:
    # settings: those of compare_pairs but baseline_label (the baseline run's name)
    """Every run against one baseline run, every metric, in one family (within a revision)."""
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
    """``{run: (baseline table, run table)}``: every (run, metric) tested in one family.

    The tables are paired over the queries they all hold (every judged query, when they come
    from the same judgments); all pairs are tested with the same draws (one matrix product per
    block), and the randomization p-values are adjusted over the whole family with
    ``correction``. Returns the comparison and notes for the user (queries left out).
    """
    from skillret.analysis.significance import CORRECTIONS, adjust, paired_tests

    check_settings(permutations=permutations, bootstrap=bootstrap, seed=seed,
                   correction=correction, alpha=alpha, corrections=CORRECTIONS)
    names = list(pairs)
    tables = [t for n in names for t in pairs[n]]
    unique = list({id(t): t for t in tables}.values())
    ids, rows, notes = align(unique)
    row_of = {id(t): r for t, r in zip(unique, rows)}
    columns = {n: tuple({m: t.values[m][row_of[id(t)]] for m in metrics} for t in pairs[n])
               for n in names}
    keys = [(n, m) for n in names for m in metrics]
    stats = paired_tests(np.column_stack([columns[n][0][m] for n, m in keys]),
                         np.column_stack([columns[n][1][m] for n, m in keys]),
                         permutations=permutations, bootstrap=bootstrap, seed=seed)
    adjusted = adjust([s["p_randomization"] for s in stats], correction)
    out_runs: dict[str, dict] = {n: {} for n in names}
    for (n, m), s, p_adj in zip(keys, stats, adjusted):
        out_runs[n][m] = entry(s, float(p_adj), alpha, rounding)
    result = {"baseline": baseline_label}
    if revision is not None:
        result["revision"] = revision
    if against is not None:
        result["against"] = against
    result.update({
        "query_set": QUERY_SET,
        "queries": int(len(ids)),
        "tests": {"primary": "randomization", "randomization": stats[0]["randomization"],
                  "permutations": int(permutations), "bootstrap": int(bootstrap),
                  "seed": int(seed), "correction": correction, "alpha": float(alpha)},
        "runs": out_runs,
    })
    return Comparison(result, ids, columns, shared_baseline=against is None), notes


def check_settings(*, permutations, bootstrap, seed, correction, alpha, corrections) -> None:
    for name, value, low in (("permutations", permutations, 1), ("bootstrap", bootstrap, 0),
                             ("seed", seed, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ConfigError(f"{name} must be an integer >= {low}, not {value!r}")
    if correction not in corrections:
        raise ConfigError(f"unknown correction {correction!r} (known: {', '.join(corrections)})")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ConfigError(f"alpha must be a number between 0 and 1, not {alpha!r}")


def _round(value, digits: int | None):
    return value if digits is None else round(value, digits)


def _p(value):
    """p-values to 4 significant digits (they come from at most 10^4-10^5 draws)."""
    return None if value is None else float(f"{value:.4g}")


def entry(s: dict, p_adjusted: float, alpha: float, rounding: int | None) -> dict:
    t = s["t"]
    return {
        "baseline": _round(s["baseline"], rounding),
        "run": _round(s["run"], rounding),
        "delta": _round(s["delta"], rounding),
        "ci95": None if s["ci95"] is None else [_round(v, rounding) for v in s["ci95"]],
        "t": None if t is None or math.isinf(t) else round(t, 4),
        "p_t": _p(s["p_t"]),
        "p_randomization": _p(s["p_randomization"]),
        "p_adjusted": _p(p_adjusted),
        "significant": bool(p_adjusted <= alpha),
        "wins": s["wins"],
        "ties": s["ties"],
        "losses": s["losses"],
    }


# --- rendering ---------------------------------------------------------------------------------

def _num(value, signed: bool = False) -> str:
    return f"{value:+.5f}" if signed else f"{value:.5f}"


def _interval(ci) -> str:
    return "-" if ci is None else f"[{ci[0]:+.5f}, {ci[1]:+.5f}]"


def _fmt_p(p) -> str:
    if p is None:
        return "-"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def summary_lines(result: dict) -> list[str]:
    tests = result["tests"]
    draws = ("every sign vector (exact)" if tests["randomization"] == "exact"
             else f"{tests['permutations']} sign flips")
    against = f" vs {result['against']}" if "against" in result else ""
    if "revision" in result:
        against = f" at {result['revision']}"
    count = sum(len(v) for v in result["runs"].values())
    return [f"baseline {result['baseline']}{against}, {result['queries']} queries "
            f"({result['query_set']}: a missing ranking scores 0)",
            f"randomization test: {draws}, seed {tests['seed']}; p adjusted over {count} "
            f"comparison{'s' if count != 1 else ''} ({tests['correction']}); "
            f"* p_adj <= {tests['alpha']:g}"]


def terminal_table(result: dict) -> str:
    header = ("run", "metric", "baseline", "run", "delta", "95% CI", "p_adj", "", "w/t/l")
    rows = []
    for name, metrics in result["runs"].items():
        for metric, s in metrics.items():
            rows.append((name, metric, _num(s["baseline"]), _num(s["run"]),
                         _num(s["delta"], True), _interval(s["ci95"]),
                         _fmt_p(s["p_adjusted"]), "*" if s["significant"] else "",
                         f"{s['wins']}/{s['ties']}/{s['losses']}"))
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = summary_lines(result)
    for r in [header] + rows:
        lines.append("  ".join(c.ljust(w) if i in (0, 1, 7) else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return "\n".join(lines)


def markdown(comparison: Comparison, shown: int = GAINS_SHOWN) -> str:
    """A leaderboard (means, deltas, markers), the tests per pair, the largest per-query changes."""
    result = comparison.result
    runs = result["runs"]
    metrics = list(next(iter(runs.values())))
    against = f" vs {result['against']}" if "against" in result else ""
    if "revision" in result:
        against = f" at {result['revision']}"
    lines = [f"# Is it significant? Baseline: {result['baseline']}{against}", "",
             *summary_lines(result), "",
             "## Leaderboard", "", "| run | " + " | ".join(metrics) + " |",
             "|---" * (len(metrics) + 1) + "|"]
    first = next(iter(runs.values()))
    order = sorted(runs, key=lambda n: -runs[n][metrics[0]]["run"])
    if comparison.shared_baseline:
        lines.append(f"| {result['baseline']} (baseline) | "
                     + " | ".join(_num(first[m]["baseline"]) for m in metrics) + " |")

    def cell(s: dict) -> str:
        before = "" if comparison.shared_baseline else f"{_num(s['baseline'])} -> "
        return (f"{before}{_num(s['run'])} ({_num(s['delta'], True)}"
                f"{'*' if s['significant'] else ''})")

    for name in order:
        lines.append(f"| {name} | " + " | ".join(cell(runs[name][m]) for m in metrics) + " |")
    lines += ["", "## Tests", "",
              "| run | metric | delta | 95% CI | t | p (t-test) | p (randomization) "
              "| p adjusted | wins / ties / losses |", "|---" * 9 + "|"]
    for name in order:
        for m in metrics:
            s = runs[name][m]
            t = "inf" if s["t"] is None and s["p_t"] == 0 else ("-" if s["t"] is None
                                                                 else f"{s['t']}")
            lines.append(f"| {name} | {m} | {_num(s['delta'], True)}"
                         f"{'*' if s['significant'] else ''} | "
                         f"{_interval(s['ci95'])} | {t} | {_fmt_p(s['p_t'])} | "
                         f"{_fmt_p(s['p_randomization'])} | {_fmt_p(s['p_adjusted'])} | "
                         f"{s['wins']} / {s['ties']} / {s['losses']} |")
    ids = comparison.query_ids
    for name in order:
        for m in metrics:
            base = comparison.pairs[name][0][m]
            other = comparison.pairs[name][1][m]
            diff = other - base
            lines += ["", f"## Largest per-query changes: {name}, {m}", "",
                      "| query | baseline | run | change |", "|---|---|---|---|"]
            gains = [i for i in np.argsort(-diff, kind="stable")[:shown] if diff[i] > 0]
            losses = [i for i in np.argsort(diff, kind="stable")[:shown] if diff[i] < 0]
            if not gains and not losses:
                lines.append("| (no query changed) | | | |")
            for i in gains + losses:
                lines.append(f"| {ids[i]} | {base[i]:.5f} | {other[i]:.5f} | {diff[i]:+.5f} |")
    return "\n".join(lines) + "\n"


def write(comparison: Comparison, output=None, markdown_path=None) -> None:
    """Write the JSON and the Markdown report (atomically, each only after both are rendered)."""
    from skillret.io.atomic import dumps_json, write_text

    texts = []
    if output:
        texts.append((output, dumps_json(comparison.result)))
    if markdown_path:
        texts.append((markdown_path, markdown(comparison)))
    for path, text in texts:
        write_text(path, text)


__all__ = ["PerQuery", "Comparison", "compare", "compare_pairs", "per_query_values", "read_table",
           "read_table_file", "align", "metric_names", "markdown", "terminal_table", "write",
           "DEFAULT_METRICS", "DEFAULTS", "QUERY_SET"]
