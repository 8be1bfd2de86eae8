"""A comparison (terminal table, Markdown, JSON), its tests within strata, its changed queries."""

from __future__ import annotations

import textwrap

import numpy as np

from skillret.io.atomic import dumps_json, write_text
from skillret.render.tables import aligned, interval, markdown_escape, markdown_table, number


def format_p(p) -> str:
    """4 decimals, "<0.0001" when it rounds to 0, "-" when None."""
    if p is None:
        return "-"
    return f"{p:.4f}" if p >= 0.00005 else "<0.0001"


def wins_ties_losses(s: dict, sep: str = "/") -> str:
    return f"{s['wins']}{sep}{s['ties']}{sep}{s['losses']}"


def draws(tests: dict) -> str:
    if tests["randomization"] == "exact":
        return "every sign vector (exact)"
    return f"{tests['permutations']} sign flips"


def _against(result: dict) -> str:
    if "revision" in result:
        return f" at {result['revision']}"
    return f" vs {result['against']}" if "against" in result else ""


def summary_lines(result: dict) -> list[str]:
    """What was compared and how, in two lines; then the runs flagged for an unjudged top K."""
    tests = result["tests"]
    count = sum(len(v) for v in result["runs"].values())
    return [f"baseline {result['baseline']}{_against(result)}, {result['queries']} queries "
            f"({result['query_set']}: a missing ranking scores 0)",
            f"randomization test: {draws(tests)}, seed {tests['seed']}; p adjusted over {count} "
            f"comparison{'s' if count != 1 else ''} ({tests['correction']}); "
            f"* p_adj <= {tests['alpha']:g}",
            *(f"unjudged: {note}" for note in result.get("unjudged", ()))]


def terminal_table(result: dict) -> str:
    """One row per run and metric."""
    header = ("run", "metric", "baseline", "run", "delta", "95% CI", "p_adj", "", "w/t/l")
    rows = [header]
    for name, metrics in result["runs"].items():
        for metric, s in metrics.items():
            rows.append((name, metric, number(s["baseline"]), number(s["run"]),
                         number(s["delta"], signed=True), interval(s["ci95"]),
                         format_p(s["p_adjusted"]), "*" if s["significant"] else "",
                         wins_ties_losses(s)))
    return "\n".join(summary_lines(result) + aligned(rows, (0, 1, 7)))


def markdown(comparison) -> str:
    """Leaderboard, tests per pair, the 5 largest per-query gains and losses."""
    result = comparison.result
    runs = result["runs"]
    first = next(iter(runs.values()))
    metrics = list(first)
    order = sorted(runs, key=lambda n: -runs[n][metrics[0]]["run"])

    def delta(s: dict) -> str:
        return number(s["delta"], signed=True) + ("*" if s["significant"] else "")

    def cell(s: dict) -> str:
        before = "" if comparison.shared_baseline else f"{number(s['baseline'])} -> "
        return f"{before}{number(s['run'])} ({delta(s)})"

    def test(name: str, m: str) -> list[str]:
        s = runs[name][m]
        t = f"{s['t']}" if s["t"] is not None else ("inf" if s["p_t"] == 0 else "-")
        return [name, m, delta(s), interval(s["ci95"]), t,
                *map(format_p, (s["p_t"], s["p_randomization"], s["p_adjusted"])),
                wins_ties_losses(s, " / ")]

    leaders = [[name, *(cell(runs[name][m]) for m in metrics)] for name in order]
    if comparison.shared_baseline:
        leaders.insert(0, [f"{result['baseline']} (baseline)",
                           *(number(first[m]["baseline"]) for m in metrics)])
    lines = [f"# Is it significant? Baseline: {result['baseline']}{_against(result)}", "",
             *summary_lines(result), "", "## Leaderboard", "",
             *markdown_table(["run", *metrics], leaders),
             "", "## Tests", "",
             *markdown_table(["run", "metric", "delta", "95% CI", "t", "p (t-test)",
                              "p (randomization)", "p adjusted", "wins / ties / losses"],
                             [test(name, m) for name in order for m in metrics])]
    ids = comparison.query_ids
    for name in order:
        for m in metrics:
            base, other = (side[m] for side in comparison.pairs[name])
            diff = other - base
            gains = [i for i in np.argsort(-diff, kind="stable")[:5] if diff[i] > 0]
            losses = [i for i in np.argsort(diff, kind="stable")[:5] if diff[i] < 0]
            rows = [[ids[i], f"{base[i]:.5f}", f"{other[i]:.5f}", f"{diff[i]:+.5f}"]
                    for i in gains + losses] or [["(no query changed)", "", "", ""]]
            lines += ["", f"## Largest per-query changes: {name}, {m}", "",
                      *markdown_table(["query", "baseline", "run", "change"], rows)]
    return "\n".join(lines) + "\n"


def write_comparison(comparison, output=None, markdown_path=None) -> None:
    """Write JSON and Markdown atomically, only once both are rendered."""
    texts = [(path, render(comparison)) for path, render in
             ((output, lambda c: dumps_json(c.result)), (markdown_path, markdown)) if path]
    for path, text in texts:
        write_text(path, text)


def stratified_table(result: dict, correction: str = "holm") -> str:
    """`breakdown.stratified_tests` per facet: a row per stratum, run and metric."""
    count = sum(len(m) for strata in result.values() for cell in strata.values()
                for m in cell["runs"].values())
    blocks = [f"within strata: p adjusted over all {count} tests below ({correction})"]
    for facet, strata in result.items():
        rows = [(facet, "queries", "run", "metric", "delta", "p_adj", "", "w/t/l")]
        for stratum, cell in strata.items():
            for run, metrics in cell["runs"].items():
                for metric, t in metrics.items():
                    rows.append((stratum, str(cell["queries"]), run, metric,
                                 f"{t['delta']:+.5f}", format_p(t["p_adjusted"]),
                                 "*" if t["significant"] else "", wins_ties_losses(t)))
        blocks.append("\n".join(aligned(rows, (0, 2, 3, 6))))
    return "\n\n".join(blocks)


def _headline(report, arrow: str = "->") -> str:
    c = report.counts
    title = f"{report.title}: " if report.title else ""
    return (f"{title}{report.label_a} {arrow} {report.label_b}, {report.metric} over "
            f"{report.queries} queries: {c['worse']} worse, {c['better']} better, "
            f"{c['unchanged']} unchanged")


def _query_rows(report, q) -> list[list[str]]:
    """A row per skill the query needs, then per unjudged skill in the worse run's top K."""
    worse = report.label_a if q.worse_side == "a" else report.label_b
    place = f"in {worse}'s top {report.cutoff}"
    return [[r.name or r.skill_id, where, "unjudged" if r.grade is None else str(r.grade),
             *("not retrieved" if rank is None else str(rank) for rank in (r.rank_a, r.rank_b))]
            for where, skills in (("needed", q.needed), (place, q.in_place)) for r in skills]


def queries_terminal(report) -> str:
    lines = [_headline(report)]
    header = ["skill", "", "grade", report.label_a, report.label_b]
    for title, items in (("largest losses", report.losses), ("largest gains", report.gains)):
        lines += ["", f"{title} ({len(items)})" if items else f"{title}: none"]
        for q in items:
            lines += ["", f"{q.query_id}  {report.metric} {q.a:.5f} -> {q.b:.5f} "
                          f"({q.change:+.5f})"]
            if q.text:
                lines += textwrap.wrap(" ".join(q.text.split()), 100, initial_indent="  ",
                                       subsequent_indent="  ")
            lines += aligned([header] + _query_rows(report, q), (0, 1), "  ")
    return "\n".join(lines) + "\n"


def queries_markdown(report) -> str:
    e = markdown_escape
    lines = [f"# Which queries changed: {e(_headline(report, '→'))}", ""]
    for title, items in (("Largest losses", report.losses), ("Largest gains", report.gains)):
        lines += [f"## {title}", ""]
        if not items:
            lines += ["None.", ""]
        for q in items:
            lines += [f"### {e(q.query_id)}: {e(report.metric)} {q.a:.5f} → {q.b:.5f} "
                      f"({q.change:+.5f})", ""]
            if q.text:
                lines += ["> " + e(" ".join(q.text.split())), ""]
            lines += markdown_table(["skill", "", "grade", e(report.label_a), e(report.label_b)],
                                    [map(e, r) for r in _query_rows(report, q)], (2, 3, 4))
            lines.append("")
    return "\n".join(lines)


def queries_json(report) -> str:
    def skill(r):
        return {"skill_id": r.skill_id, "name": r.name, "grade": r.grade, "rank_a": r.rank_a,
                "rank_b": r.rank_b}

    def query(q):
        return {"query_id": q.query_id, "text": q.text, "a": q.a, "b": q.b,
                "change": q.change, "needed": [skill(r) for r in q.needed],
                "in_place": {"side": q.worse_side, "top": report.cutoff,
                             "skills": [skill(r) for r in q.in_place]}}

    return dumps_json({"a": report.label_a, "b": report.label_b, "title": report.title,
                       "metric": report.metric, "queries": report.queries,
                       "counts": report.counts, "losses": [query(q) for q in report.losses],
                       "gains": [query(q) for q in report.gains]})


def render_queries(report, fmt: str) -> str:
    """A `QueryReport` (`skillret-eval queries`) as terminal text, Markdown or JSON."""
    return {"terminal": queries_terminal, "markdown": queries_markdown,
            "json": queries_json}[fmt](report)
