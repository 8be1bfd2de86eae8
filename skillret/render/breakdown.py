"""A breakdown by query facet for people: the profile's metrics per stratum, and the tests within
strata of a comparison, as terminal tables.
"""

from __future__ import annotations

from skillret.render.compare import format_p
from skillret.render.tables import format_value


def stratified_table(result: dict, correction: str = "holm") -> str:
    """The terminal's view of `stratified_tests`: per facet, a row per stratum, run and
    metric with the delta, the adjusted p-value and a marker."""
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
                                 "*" if t["significant"] else "",
                                 f"{t['wins']}/{t['ties']}/{t['losses']}"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        blocks.append("\n".join("  ".join(
            c.ljust(w) if i in (0, 2, 3, 6) else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows))
    return "\n\n".join(blocks)


def breakdown_tables(result: dict, profile, evaluated: int | None = None) -> str:
    """One small table per facet: strata as rows, query counts and the profile's metrics."""
    blocks = []
    for facet, strata in result.items():
        metrics = list(next(iter(strata.values()), {"queries": 0}))[1:]
        first = max([len(facet)] + [len(s) for s in strata])
        widths = [max(len(m), (profile.rounding or 5) + 2) for m in metrics]
        note = "; a query counts in each of its categories" if facet == "skill_category" else ""
        total = "" if evaluated is None else f": {evaluated} queries"
        lines = [f"{profile.name} by {facet}{total} ({profile.query_set}{note})",
                 f"  {facet:<{first}}  queries" + "".join(
                     f"  {m:>{w}}" for m, w in zip(metrics, widths))]
        for stratum, row in strata.items():
            lines.append(f"  {stratum:<{first}}  {row['queries']:>7}" + "".join(
                f"  {format_value(row[m], profile.rounding):>{w}}"
                for m, w in zip(metrics, widths)))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
