"""Terminal tables: profiles (measures x cutoffs), the profile catalogue, breakdowns; the number
format, the column layout and the escapes (a name such as `bm25_x&y%` printed as typed in LaTeX
and Markdown) every renderer shares."""

from __future__ import annotations

from skillret.measures import registry
from skillret.scoring.names import parse_metric
from skillret.scoring.profiles import QUERY_SETS, Profile

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "\n": " ", "\r": " "}
_MARKDOWN = {"|": r"\|", "\\": "\\\\", "*": r"\*", "_": r"\_", "<": "&lt;", ">": "&gt;",
             "`": r"\`", "[": r"\[", "]": r"\]", "\n": " ", "\r": " "}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(c, c) for c in str(text))


def markdown_escape(text: str) -> str:
    return "".join(_MARKDOWN.get(c, c) for c in str(text))


def number(value: float, digits: int | None = 5, signed: bool = False) -> str:
    """`value` with `digits` decimals (5 when None), with its sign when `signed`."""
    return f"{value:{'+' if signed else ''}.{5 if digits is None else digits}f}"


def interval(ci, digits: int | None = 5) -> str:
    """A 95% interval, "-" when None."""
    return "-" if ci is None else f"[{number(ci[0], digits, True)}, {number(ci[1], digits, True)}]"


def aligned(rows: list, left=(0,), indent: str = "") -> list[str]:
    """`rows` as lines of columns two spaces apart: those in `left` padded on the right, the
    others on the left; no trailing spaces."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) if i in left else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows]


def markdown_table(header: list[str], rows, right=()) -> list[str]:
    """A Markdown table's lines: `header`, the rule (the columns in `right` aligned right), then
    `rows`; an empty cell is one space."""
    def row(cells) -> str:
        return "|" + "".join(f" {c} |" if c else " |" for c in cells)

    return [row(header), "|" + "".join("---:|" if i in right else "---|"
                                       for i in range(len(header))), *map(row, rows)]


def profile_table(profile: Profile, values: dict[str, float], evaluated: int) -> str:
    metrics = [parse_metric(name) for name in values]
    measures = list(dict.fromkeys(m.measure for m in metrics))
    cutoffs = sorted({m.k for m in metrics}, key=lambda k: (k is None, k or 0))  # None: whole
    cell = {(m.measure, m.k): values[m.short_name()] for m in metrics}
    width = max(8, (profile.rounding or 5) + 3)
    level = ("" if profile.relevance_level == 1
             else f", relevant: grade >= {profile.relevance_level}")
    lines = [f"{profile.name}: {evaluated} queries ({profile.query_set}{level})"]
    lines.append(" " * 14 + "".join(f"{'whole' if k is None else '@' + str(k):>{width}}"
                                    for k in cutoffs))
    for measure in measures:
        row = "".join(
            f"{number(cell[(measure, k)], profile.rounding):>{width}}"
            if (measure, k) in cell else " " * width for k in cutoffs)
        lines.append(f"  {measure:<12}{row}")
    return "\n".join(lines)


def scores_table(scores) -> str:
    q = scores.query_counts
    blocks = [profile_table(p, scores.metrics[p.name], q["evaluated"][p.name])
              for p in scores.profiles]
    summary = (f"queries: {q['judged']} judged, {q['in_run']} in the run, {q['in_both']} in both, "
               f"{q['missing']} missing, {q['empty']} empty, {q['unjudged']} without judgments")
    return "\n\n".join(blocks + [summary])


def catalogue_text(profiles: dict[str, Profile]) -> str:
    """What `skillret-eval profiles` prints."""
    out = []
    for profile in profiles.values():
        kind = "built-in" if profile.builtin else "user-defined"
        rounding = "none" if profile.rounding is None else f"{profile.rounding} decimals"
        out.append(f"{profile.name} ({kind})" + (f": {profile.description}"
                                                   if profile.description else ""))
        out.append(f"  metrics:   {', '.join(profile.metrics)}")
        out.append(f"  queries:   {profile.query_set}: {QUERY_SETS[profile.query_set]}")
        out.append(f"  relevant:  grade >= {profile.relevance_level}")
        out.append(f"  rounding:  {rounding}")
        out.append("")
    out.append("Measures (per query; a profile averages them over its query set):")
    for measure in registry.all_measures():
        out.append("")
        out.extend("  " + line if line else "" for line in measure.definition.splitlines())
        others = dict.fromkeys([*measure.aliases, *(  # each name once, in the tools' order
            w for tool in registry.TOOLS for w in measure.tools.get(tool, ()))])
        if others:
            out.append(f"  (also written {', '.join(others)}; names are not case-sensitive)")
    out.append("")
    out.append("Ranking: score descending; equal scores broken by skill id, descending in byte "
               "order (as trec_eval); a rank column is ignored.")
    return "\n".join(out)


def breakdown_tables(result: dict, profile, evaluated: int) -> str:
    """One table per facet: strata as rows; `evaluated`: the profile's query count."""
    blocks = []
    for facet, strata in result.items():
        metrics = list(next(iter(strata.values()), {"queries": 0}))[1:]
        note = "; a query counts in each of its categories" if facet == "skill_category" else ""
        rows = [[facet, "queries", *metrics]] + [
            [stratum, str(row["queries"]), *(number(row[m], profile.rounding) for m in metrics)]
            for stratum, row in strata.items()]
        blocks.append("\n".join([f"{profile.name} by {facet}: {evaluated} queries "
                                 f"({profile.query_set}{note})",
                                 *aligned(rows, indent="  ")]))
    return "\n\n".join(blocks)
