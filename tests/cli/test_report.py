"""`skillret-eval report`: the pairwise family, letters, bold, markers, the formats.

Hand-computed on a family small enough to enumerate (exact p-values), and cross-checked against
`compare` (`analysis.compare.compare_pairs` / `compare` and the `compare` command) on data where
the sign flips are drawn.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from skillret.analysis.compare import (compare, compare_pairs, letters, results_table,
                                       revision_summary)
from skillret.io.per_query import PerQuery
from skillret.cli import main
from skillret.render.report import render_summary, render_table

M = "NDCG@10"


def table(values, source="t", metric=M, ids=None) -> PerQuery:
    values = np.asarray(values, dtype=np.float64)
    ids = np.array(ids or [f"q{i:02d}" for i in range(len(values))])
    return PerQuery(ids, {metric: values}, source)


def hand_family():
    # 8 queries: 2^8 = 256 sign vectors <= 10000 draws, so every p-value is exact.
    return {"A": table([0] * 8), "B": table([1] * 8), "C": table([1] * 7 + [0])}


def test_pairwise_family_by_hand():
    # B - A: eight 1s; |sum| = 8 only for all-+ or all--: p = 2/256.
    # C - A: seven 1s and a 0: the 0's sign is free: p = 4/256. C - B: one -1: p = 1.
    # Holm over 3: 3 * 2/256 = 0.0234375, 2 * 4/256 = 0.03125, 1.
    t, _ = results_table(hand_family(), [M], source="hand")
    tests = t.tests
    # (p-values to 4 significant digits, as compare writes them)
    assert tests[("A", "B", M)]["p_randomization"] == 0.007812  # 2/256
    assert tests[("A", "C", M)]["p_randomization"] == 0.01562   # 4/256
    assert tests[("B", "C", M)]["p_randomization"] == 1.0
    assert tests[("A", "B", M)]["p_adjusted"] == 0.02344
    assert tests[("A", "C", M)]["p_adjusted"] == 0.03125
    assert t.settings["randomization"] == "exact" and t.family == 3
    assert t.letters == {"A": "a", "B": "b", "C": "c"}
    assert t.beats == {"A": {M: []}, "B": {M: ["A"]}, "C": {M: ["A"]}}
    assert t.best == {M: ["B"]}
    assert t.values == {"A": {M: 0.0}, "B": {M: 1.0}, "C": {M: 0.875}}
    strict, _ = results_table(hand_family(), [M], source="hand", alpha=0.025)
    assert strict.beats == {"A": {M: []}, "B": {M: ["A"]}, "C": {M: []}}
    none, _ = results_table(hand_family(), [M], source="hand", correction="none", alpha=0.01)
    assert none.beats["B"][M] == ["A"] and none.beats["C"][M] == []  # 4/256 > 0.01


def test_baseline_markers_by_hand():
    t, _ = results_table(hand_family(), [M], source="hand", baseline="C")
    # against C: A (p 4/256, Holm x2 = 0.03125: lower), B (p 1: no marker)
    assert t.markers == {"A": {M: "-"}, "B": {M: ""}, "C": {M: ""}}
    text = render_table(t, "terminal")
    assert "base  C" in text and "+ / -: significantly higher / lower than C" in text


def synthetic(runs=5, queries=300, seed=3, metrics=("NDCG@10", "Recall@5")):
    rng = np.random.default_rng(seed)
    levels = np.array([0, 0.30103, 0.5, 0.63093, 1 / 3, 1.0])
    base = rng.integers(0, len(levels), queries)
    ids = [f"q-{i:04d}" for i in range(queries)]
    out = {}
    for r in range(runs):
        vals = {}
        for k, m in enumerate(metrics):
            shift = rng.integers(-1, 2, queries) * (rng.random(queries) < 0.15)
            up = (rng.random(queries) < 0.08 * r) * (k + 1)
            vals[m] = levels[np.clip(base + shift + up, 0, len(levels) - 1)]
        out[f"run{r}"] = PerQuery(np.array(ids), vals, f"run{r}")
    return out, list(metrics)


def test_a_pair_tested_alone_has_the_same_p_value():
    tables, metrics = synthetic()
    full = results_table(tables, metrics, source="s", permutations=3000)[0].tests
    alone, _ = compare(("run1", tables["run1"]), {"run3": tables["run3"]}, metrics,
                       permutations=3000, bootstrap=0)
    for m in metrics:
        assert full[("run1", "run3", m)]["p_randomization"] == \
            alone.result["runs"]["run3"][m]["p_randomization"]


def test_beats_follow_significance_and_direction():
    tables, metrics = synthetic()
    t, _ = results_table(tables, metrics, source="s", permutations=2000, rounding=None)
    assert 3 <= sum(e["significant"] for e in t.tests.values()) < t.family  # not all empty
    for (low, high, m), e in t.tests.items():   # unrounded: the means the table compares
        higher = high if e["run"] > e["baseline"] else low
        lower = low if higher == high else high
        assert (lower in t.beats[higher][m]) == e["significant"]
        assert higher not in t.beats[lower][m]


def test_baseline_table_is_compare():
    tables, metrics = synthetic()
    t, _ = results_table(tables, metrics, source="s", baseline="run2", permutations=2000)
    others = {n: x for n, x in tables.items() if n != "run2"}
    comparison, _ = compare(("run2", tables["run2"]), others, metrics, permutations=2000,
                            bootstrap=0)
    for name, es in comparison.result["runs"].items():
        for m, e in es.items():
            assert t.tests[("run2", name, m)] == e
            expected = "" if not e["significant"] else ("+" if e["delta"] > 0 else "-")
            assert t.markers[name][m] == expected


def test_letters():
    assert letters(3) == ["a", "b", "c"]
    many = letters(60)
    assert many[25:28] == ["z", "A", "B"] and many[52:55] == ["aa", "ab", "ac"]
    assert len(set(letters(800))) == 800


def test_best_ties_all_bold():
    tables = {"x": table([1, 0, 1]), "y": table([0, 1, 1]), "z": table([0, 0, 0])}
    t, _ = results_table(tables, [M], source="s")
    assert t.best == {M: ["x", "y"]}
    assert render_table(t, "markdown").count("**0.66667**") == 2


def balanced(text: str) -> bool:
    depth = 0
    for i, c in enumerate(text):
        if c in "{}" and i and text[i - 1] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def test_latex_structure_and_escaping():
    tables, metrics = synthetic(runs=3)
    tables = {"bm25_x&y%": tables["run0"], "dense#1": tables["run1"], "hy~b{r}": tables["run2"]}
    t, _ = results_table(tables, metrics, source="main", permutations=2000)
    text = render_table(t, "latex")
    body = [line for line in text.splitlines() if not line.startswith("%")]
    assert body[0] == "\\begin{tabular}{llll}" and body[-1] == "\\end{tabular}"
    assert body[1] == "\\toprule" and body[3] == "\\midrule" and body[-2] == "\\bottomrule"
    assert body[2] == " & Run & NDCG@10 & Recall@5 \\\\"
    rows = body[4:-2]
    assert [r.split(" & ")[1] for r in rows] == [
        r"bm25\_x\&y\%", r"dense\#1", r"hy\textasciitilde{}b\{r\}"]
    for row in rows:  # four cells: & between cells only (the name's is escaped)
        assert len(re.findall(r"(?<!\\)&", row)) == 3 and row.endswith("\\\\")
    assert text.count("\\textbf{") == sum(len(v) for v in t.best.values())
    for m, best in t.best.items():
        for run in best:
            assert f"\\textbf{{{t.values[run][m]:.5f}}}" in text
    marks = sum(len(v) for b in t.beats.values() for v in b.values())
    assert marks and text.count("$^{\\mathrm{") == sum(
        1 for b in t.beats.values() for v in b.values() if v)
    assert balanced(text)
    assert all(len(line) < 200 for line in text.splitlines())


def test_formats_agree():
    tables, metrics = synthetic(runs=4)
    t, _ = results_table(tables, metrics, source="s", permutations=2000)
    record = json.loads(render_table(t, "json"))
    csv_rows = render_table(t, "csv").splitlines()
    assert csv_rows[0] == "run,letter,metric,value,best,beats"
    assert len(csv_rows) == 1 + 4 * len(metrics)
    for run in record["runs"]:
        for m, cell in run["values"].items():
            letters_ = "".join(t.letters[r] for r in cell["beats"])
            assert f"{run['name']},{run['letter']},{m},{cell['value']:.5f}," \
                   f"{'true' if cell['best'] else 'false'},{letters_}" in csv_rows
    assert len(record["pairs"]) == t.family == 6 * len(metrics)


def test_revision_summary_is_compare_across_revisions():
    tables, metrics = synthetic(runs=4)
    before = {"a": tables["run0"], "b": tables["run1"], "gone": tables["run2"]}
    after = {"a": tables["run3"], "b": tables["run1"], "new": tables["run2"]}
    summary, _ = revision_summary("main", "pr", before, after, metrics, permutations=2000,
                                  bootstrap=500)
    reference, _ = compare_pairs({n: (before[n], after[n]) for n in ("a", "b")}, metrics,
                                 baseline_label="main", against="pr", permutations=2000,
                                 bootstrap=500)
    assert summary.comparison.result == reference.result
    assert list(summary.added) == ["new"] and list(summary.removed) == ["gone"]
    text = render_summary(summary, "markdown")
    assert len(text.splitlines()) < 60
    assert "Runs added (values at pr): new (" in text and "Runs removed (values at main): gone"\
        in text
    a = reference.result["runs"]["a"]["NDCG@10"]
    mark = "**better**" if a["significant"] and a["delta"] > 0 else (
        "**worse**" if a["significant"] else "no")
    assert (f"| a | NDCG@10 | {a['baseline']:.5f} | {a['run']:.5f} | {a['delta']:+.5f} | "
            f"[{a['ci95'][0]:+.5f}, {a['ci95'][1]:+.5f}] | {a['wins']} / {a['ties']} / "
            f"{a['losses']} | {mark} |") in text


# --- the command, on run files ------------------------------------------------------------------

def write_inputs(tmp_path, runs=3, queries=40, seed=5):
    """TREC qrels and runs: each query has 2 relevant skills; run r ranks them lower with r."""
    rng = np.random.default_rng(seed)
    qrels = []
    for q in range(queries):
        qrels += [f"q{q:03d} 0 s{q}-a 2", f"q{q:03d} 0 s{q}-b 1"]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    paths = []
    for r in range(runs):
        lines = []
        for q in range(queries):
            skills = [f"noise{k}" for k in range(12)]
            for s in (f"s{q}-a", f"s{q}-b"):
                skills.insert(int(rng.integers(0, 3 + 4 * r)), s)
            for rank, s in enumerate(skills[:10], 1):
                lines.append(f"q{q:03d} Q0 {s} {rank} {100 - rank} r{r}")
        path = tmp_path / f"run{r}.trec"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return str(tmp_path / "qrels.txt"), paths


def run_cli(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_report_matches_compare_command(tmp_path, capsys):
    qrels, runs = write_inputs(tmp_path, runs=2)
    status, out, _ = run_cli(capsys, ["report", "--qrels", qrels, "--run", runs[0], "--run",
                                      runs[1], "--format", "json", "--permutations", "5000"])
    assert status == 0
    report = json.loads(out)
    status, _, _ = run_cli(capsys, ["compare", "--qrels", qrels, "--run", runs[0], "--run",
                                    runs[1], "--permutations", "5000", "--bootstrap", "0",
                                    "--output", str(tmp_path / "c.json")])
    assert status == 0
    compared = json.loads((tmp_path / "c.json").read_text())
    assert report["tests"]["family"] == 4  # one pair: compare's family exactly
    for pair in report["pairs"]:
        theirs = compared["runs"]["run1"][pair["metric"]]
        for key in ("delta", "p_randomization", "p_adjusted", "significant", "wins"):
            assert pair[key] == theirs[key], key
    assert any(p["significant"] for p in report["pairs"])


def test_cli_baseline_matches_compare_command(tmp_path, capsys):
    qrels, runs = write_inputs(tmp_path, runs=3)
    argv = ["--qrels", qrels] + [a for r in runs for a in ("--run", r)]
    status, out, _ = run_cli(capsys, ["report", *argv, "--baseline", "run1", "--format", "json",
                                      "--metric", "NDCG@10", "--metric", "Recall@5"])
    assert status == 0
    report = json.loads(out)
    status, _, _ = run_cli(capsys, ["compare", *argv, "--baseline", "run1", "--metric",
                                    "NDCG@10", "--metric", "Recall@5", "--output",
                                    str(tmp_path / "c.json")])
    compared = json.loads((tmp_path / "c.json").read_text())
    for pair in report["pairs"]:
        theirs = compared["runs"][pair["run"]][pair["metric"]]
        assert pair["baseline"] == "run1"
        assert (pair["p_adjusted"], pair["significant"]) == (theirs["p_adjusted"],
                                                             theirs["significant"])
    marks = {r["name"]: r["values"]["NDCG@10"]["marker"] for r in report["runs"]}
    assert marks["run0"] == "+" and marks["run2"] == "-"  # run r ranks the needed lower


def test_cli_output_is_byte_identical_for_a_seed(tmp_path, capsys):
    qrels, runs = write_inputs(tmp_path)
    argv = ["report", "--qrels", qrels] + [a for r in runs for a in ("--run", r)]
    texts = {}
    for fmt in ("terminal", "markdown", "latex", "csv", "json"):
        first = run_cli(capsys, argv + ["--format", fmt, "--seed", "3"])[1]
        second = run_cli(capsys, argv + ["--format", fmt, "--seed", "3"])[1]
        assert first == second and first
        texts[fmt] = first
    assert "[" in texts["terminal"] and "**" in texts["markdown"]
    other = run_cli(capsys, argv + ["--format", "json", "--seed", "4"])[1]
    assert json.loads(other)["tests"]["seed"] == 4


@pytest.mark.parametrize("extra, message", [
    (["--baseline", "nope"], "--baseline: unknown run 'nope'"),
    (["--metric", "NDCG@x"], "NDCG@x"),
    (["--profile", "official", "--metric", "NDCG@10"], "not both"),
    (["--rev", "HEAD"], "not both"),
    (["--alpha", "2"], "alpha must be"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, extra, message):
    qrels, runs = write_inputs(tmp_path, runs=2)
    out_file = tmp_path / "out.tex"
    status, out, err = run_cli(capsys, ["report", "--qrels", qrels, "--run", runs[0], "--run",
                                        runs[1], "--output", str(out_file), *extra])
    assert status == 2 and out == "" and message in err
    assert len(err.strip().splitlines()) == 1 and not out_file.exists()


def test_cli_one_run_is_refused(tmp_path, capsys):
    qrels, runs = write_inputs(tmp_path, runs=1)
    status, _, err = run_cli(capsys, ["report", "--qrels", qrels, "--run", runs[0]])
    assert status == 2 and "at least two --run" in err


def test_report_imports_no_rendering_or_cli():
    import ast
    from pathlib import Path

    import skillret.analysis.compare as r
    import skillret.analysis.queries as q
    for module in (q, r):
        tree = ast.parse(Path(module.__file__).read_text())
        names = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [n for n in names if n and n.startswith(("skillret.render", "skillret.cli",
                                                             "argparse"))]


def test_docs_ci_shows_the_workflow_file():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    workflow = (root / ".github" / "workflows" / "skillret-report.yml").read_text()
    docs = (root / "docs" / "ci.md").read_text()
    assert f"```yaml\n{workflow}```" in docs
