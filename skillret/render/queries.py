"""`skillret-eval queries`: a `QueryReport` as terminal text, Markdown and JSON."""

from __future__ import annotations

import textwrap

from skillret.io.atomic import dumps_json
from skillret.render.tables import aligned, markdown_escape, markdown_table


def headline(report, arrow: str = "->") -> str:
    c = report.counts
    title = f"{report.title}: " if report.title else ""
    return (f"{title}{report.label_a} {arrow} {report.label_b}, {report.metric} over "
            f"{report.queries} queries: {c['worse']} worse, {c['better']} better, "
            f"{c['unchanged']} unchanged")


def _rows(report, q) -> list[list[str]]:
    """A row per skill the query needs, then per unjudged skill in the worse run's top K."""
    worse = report.label_a if q.worse_side == "a" else report.label_b
    place = f"in {worse}'s top {report.cutoff}"
    return [[r.name or r.skill_id, where, "unjudged" if r.grade is None else str(r.grade),
             *("not retrieved" if rank is None else str(rank) for rank in (r.rank_a, r.rank_b))]
            for where, skills in (("needed", q.needed), (place, q.in_place)) for r in skills]


def terminal(report) -> str:
    lines = [headline(report)]
    header = ["skill", "", "grade", report.label_a, report.label_b]
    for title, items in (("largest losses", report.losses), ("largest gains", report.gains)):
        lines += ["", f"{title} ({len(items)})" if items else f"{title}: none"]
        for q in items:
            lines += ["", f"{q.query_id}  {report.metric} {q.a:.5f} -> {q.b:.5f} "
                          f"({q.change:+.5f})"]
            if q.text:
                lines += textwrap.wrap(" ".join(q.text.split()), 100, initial_indent="  ",
                                       subsequent_indent="  ")
            lines += aligned([header] + _rows(report, q), (0, 1), "  ")
    return "\n".join(lines) + "\n"


def markdown(report) -> str:
    e = markdown_escape
    lines = [f"# Which queries changed: {e(headline(report, '→'))}", ""]
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
                                    [map(e, r) for r in _rows(report, q)], (2, 3, 4))
            lines.append("")
    return "\n".join(lines)


def json_text(report) -> str:
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


def render(report, fmt: str) -> str:
    return {"terminal": terminal, "markdown": markdown, "json": json_text}[fmt](report)
