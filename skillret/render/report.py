"""`skillret-eval report`: a `RunTable` or `RevisionSummary` in each of its formats."""

from __future__ import annotations

import csv
import io

from skillret.analysis.compare import BASELINE, PAIRWISE
from skillret.io.atomic import dumps_json
from skillret.render.compare import draws, wins_ties_losses
from skillret.render.tables import (aligned, interval, latex_escape, markdown_escape,
                                    markdown_table, number)
from skillret.scoring.profiles import ALL_JUDGED

MARKER = "<!-- skillret-eval report -->"  # lets a bot find its own comment


def _tested(what: str, queries: int, tests: dict, count: int, interval: str = "") -> list[str]:
    """What was compared, over how many queries; how it was tested: `count` tests."""
    return [f"{what}, {queries} queries ({ALL_JUDGED}: a missing ranking scores 0)",
            f"paired randomization test, {draws(tests)}, seed {tests['seed']}; {interval}"
            f"p adjusted over {count} test{'s' if count != 1 else ''} ({tests['correction']})"]


def describe(table, best: str = "[best value per metric]",
             letters: str = "the letters after a value") -> list[str]:
    """Three plain sentences on the table and its markers; `best`, `letters`: legend words."""
    where = f"{len(table.runs)} runs" + (f" at {table.source}" if table.source else "")
    lines = _tested(where, table.queries, table.settings, table.family)
    lines[1] += f", alpha {table.settings['alpha']:g}"
    lines.append(f"{best}; {letters}: the runs it beats significantly" if table.mode == PAIRWISE
                 else f"{best}; + / -: significantly higher / lower than {table.baseline}")
    return lines


def _superscript(table, run: str, metric: str) -> str:
    if table.mode == PAIRWISE:
        return "".join(table.letters[r] for r in table.beats[run][metric])
    return table.markers[run][metric]


def _values(table, run: str, digits, bold, sup, plain=str) -> list[str]:
    """A run's values, the best in `bold` and the others `plain`, each with its markers in
    `sup`."""
    return [(bold if run in table.best[m] else plain)(number(table.values[run][m], digits))
            + (sup(mark) if (mark := _superscript(table, run, m)) else "")
            for m in table.metrics]


def terminal(table, digits: int = 5) -> str:
    rows = [["", "run"] + list(table.metrics)] + [
        [table.letters[run] if table.mode == PAIRWISE else
         ("base" if run == table.baseline else ""), run,
         *_values(table, run, digits, "[{}]".format, " {}".format, " {} ".format)]
        for run in table.runs]
    return "\n".join(describe(table) + aligned(rows, range(len(rows[0])))) + "\n"


def _rows(table, digits, escape, bold, sup):
    """Each run's cells: its letter (pairwise), its name, then its :func:`_values`."""
    for run in table.runs:
        name = escape(run)
        if table.mode == BASELINE and run == table.baseline:
            name += " (baseline)"
        yield ([table.letters[run], name] if table.mode == PAIRWISE else [name]) + _values(
            table, run, digits, bold, sup)


def markdown(table, digits: int = 5) -> str:
    text = describe(table, "**bold**: the best value per metric", "superscript letters")
    header = (["", "run"] if table.mode == PAIRWISE else ["run"]) + [
        markdown_escape(m) for m in table.metrics]
    rows = _rows(table, digits, markdown_escape, lambda v: f"**{v}**",
                 lambda mark: f"<sup>{mark}</sup>")
    table_lines = markdown_table(header, rows, range(len(header) - len(table.metrics),
                                                     len(header)))
    return "\n".join([MARKER, "; ".join(text) + ".", "", *table_lines]) + "\n"


def latex(table, digits: int = 5) -> str:
    """A booktabs `tabular` fragment, best in bold, markers as superscripts."""
    pairwise = table.mode == PAIRWISE
    columns = ("ll" if pairwise else "l") + "l" * len(table.metrics)
    about = describe(table, "bold: the best value per metric", "superscript letters")
    lines = [f"% skillret-eval report: {latex_escape(about[0])}"]
    lines += [f"% {latex_escape(line)}" for line in about[1:]]
    lines += [f"\\begin{{tabular}}{{{columns}}}", "\\toprule",
              (" & Run & " if pairwise else "Run & ")
              + " & ".join(latex_escape(m) for m in table.metrics) + " \\\\",
              "\\midrule"]

    def sup(mark: str) -> str:
        return f"$^{{\\mathrm{{{mark}}}}}$" if pairwise else f"$^{{{mark}}}$"

    for cells in _rows(table, digits, latex_escape, lambda v: f"\\textbf{{{v}}}", sup):
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def csv_text(table, digits: int = 5) -> str:
    out = io.StringIO()
    last = "beats" if table.mode == PAIRWISE else "marker"
    csv.writer(out, lineterminator="\n").writerows(
        [["run", "letter", "metric", "value", "best", last]]
        + [[run, table.letters[run], m, number(table.values[run][m], digits),
            "true" if run in table.best[m] else "false", _superscript(table, run, m)]
           for run in table.runs for m in table.metrics])
    return out.getvalue()


def json_text(table, digits: int = 5) -> str:
    key, marks = ("beats", table.beats) if table.mode == PAIRWISE else ("marker", table.markers)
    runs = [{"name": run, "letter": table.letters[run], "values": {
        m: {"value": table.values[run][m], "best": run in table.best[m], key: marks[run][m]}
        for m in table.metrics}} for run in table.runs]
    kept = ("delta", "p_randomization", "p_adjusted", "significant", "wins", "ties", "losses")
    pairs = [{"baseline": base, "run": run, "metric": metric, **{k: entry[k] for k in kept}}
             for (base, run, metric), entry in table.tests.items()]
    baseline = {} if table.baseline is None else {"baseline": table.baseline}
    return dumps_json({"mode": table.mode, "source": table.source, "query_set": ALL_JUDGED,
                       "queries": table.queries, "metrics": list(table.metrics),
                       "tests": {**table.settings, "family": table.family}, **baseline,
                       "runs": runs, "pairs": pairs})


def render_table(table, fmt: str) -> str:
    return {"terminal": terminal, "markdown": markdown, "latex": latex, "csv": csv_text,
            "json": json_text}[fmt](table, table.rounding)


def _tests(summary) -> list[tuple[str, str, dict]]:
    """(run, metric, its test) for each run at both revisions."""
    runs = {} if summary.comparison is None else summary.comparison.result["runs"]
    return [(run, m, s) for run, metrics in runs.items() for m, s in metrics.items()]


def _summary_rows(summary, digits: int) -> list[list[str]]:
    return [[run, m, number(s["baseline"], digits), number(s["run"], digits),
             number(s["delta"], digits, True), interval(s["ci95"], digits), wins_ties_losses(s),
             "" if not s["significant"] else "better" if s["delta"] > 0
             else "worse" if s["delta"] < 0 else "changed"]
            for run, m, s in _tests(summary)]


def _summary_lead(summary) -> list[str]:
    if summary.comparison is None:
        return [f"{summary.old} -> {summary.new}: no run at both revisions"]
    result = summary.comparison.result
    tests, runs = result["tests"], result["runs"]
    lines = _tested(f"{summary.old} -> {summary.new}: {len(runs)} run"
                    f"{'s' if len(runs) != 1 else ''} at both", result["queries"], tests,
                    sum(len(v) for v in runs.values()),
                    f"95% bootstrap interval ({tests['bootstrap']} resamples); ")
    lines[1] += f"; better / worse: p_adj <= {tests['alpha']:g}"
    return lines


def _changed_runs(summary, digits: int, escape=lambda s: s) -> list[str]:
    lines = []
    for what, where, runs in (("added", summary.new, summary.added),
                              ("removed", summary.old, summary.removed)):
        if not runs:
            lines.append(f"Runs {what}: none.")
            continue
        parts = [f"{escape(n)} ("
                 + ", ".join(f"{escape(m)} {number(v, digits)}" for m, v in means.items()) + ")"
                 for n, means in runs.items()]
        lines.append(f"Runs {what} (values at {escape(where)}): " + "; ".join(parts) + ".")
    if summary.comparison is not None:
        lines += [f"Unjudged: {escape(note)}." for note in
                  summary.comparison.result.get("unjudged", ())]
    return lines


def summary_terminal(summary, digits: int = 5) -> str:
    header = ["run", "metric", summary.old, summary.new, "delta", "95% CI", "w/t/l", ""]
    rows = _summary_rows(summary, digits)
    lines = _summary_lead(summary) + (aligned([header] + rows, (0, 1, 7)) if rows else [])
    lines += _changed_runs(summary, digits)
    return "\n".join(lines) + "\n"


def summary_markdown(summary, digits: int = 5) -> str:
    e = markdown_escape
    lead = _summary_lead(summary)
    if summary.comparison is not None:  # the revisions are in the title
        lead[0] = lead[0].split(": ", 1)[1]
    clauses = "; ".join(lead).split("; ")  # one clause a line: short lines, one paragraph
    lines = [MARKER, f"### skillret-eval: {e(summary.old)} → {e(summary.new)}", "",
             *(c + ";" for c in clauses[:-1]), clauses[-1] + ".", ""]
    rows = _summary_rows(summary, digits)
    if rows:
        header = ["run", "metric", e(summary.old), e(summary.new), "delta", "95% CI",
                  "wins / ties / losses", "significant"]
        lines += markdown_table(header, [[e(r[0]), e(r[1]), *r[2:6], r[6].replace("/", " / "),
                                          f"**{r[7]}**" if r[7] else "no"] for r in rows],
                                (2, 3, 4))
        lines.append("")
    else:
        lines += [f"No run is registered at both {e(summary.old)} and {e(summary.new)}.", ""]
    lines += _changed_runs(summary, digits, e)
    return "\n".join(lines) + "\n"


def summary_csv(summary, digits: int = 5) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "status", "metric", "old", "new", "delta", "ci_low", "ci_high",
                     "p_adjusted", "significant", "wins", "ties", "losses"])
    for run, m, s in _tests(summary):
        writer.writerow([run, "both", m, number(s["baseline"], digits), number(s["run"], digits),
                         number(s["delta"], digits, True),
                         *(("", "") if not s["ci95"] else
                           (number(v, digits, True) for v in s["ci95"])),
                         s["p_adjusted"], "true" if s["significant"] else "false",
                         s["wins"], s["ties"], s["losses"]])
    for status, runs in (("added", summary.added), ("removed", summary.removed)):
        for run, means in runs.items():
            for m, v in means.items():
                old, new = ("", number(v, digits)) if status == "added" else (number(v, digits), "")
                writer.writerow([run, status, m, old, new] + [""] * 8)
    return out.getvalue()


def summary_json(summary, digits: int = 5) -> str:
    comparison = None if summary.comparison is None else summary.comparison.result
    return dumps_json({**vars(summary), "metrics": list(summary.metrics), "comparison": comparison})


def render_summary(summary, fmt: str, rounding: int | None = 5) -> str:
    return {"terminal": summary_terminal, "markdown": summary_markdown, "csv": summary_csv,
            "json": summary_json}[fmt](summary, rounding)
