"""`skillret-eval compare` over run files, as a user runs it: real files, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import skillret
from skillret.cli import main

ROOT = Path(__file__).resolve().parents[2]
QRELS = ROOT / "data" / "sample" / "qrels" / "test.jsonl"


def judged() -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in QRELS.read_text().splitlines():
        row = json.loads(line)
        out.setdefault(row["query_id"], {})[row["skill_id"]] = row["relevance"]
    return out


def write_run(path: Path, seed: int, *, drop: int = 0, depth: int = 20) -> Path:
    """A TREC run: each query's judged skills at random ranks among distractors; the first
    ``drop`` queries left out."""
    rng = np.random.default_rng(seed)
    lines = []
    for i, (qid, rels) in enumerate(sorted(judged().items())):
        ranking = [f"other-{j}" for j in range(depth)]
        for skill in rels:
            ranking[int(rng.integers(0, depth))] = skill
        if i < drop:
            continue
        for rank, skill in enumerate(dict.fromkeys(ranking), 1):
            lines.append(f"{qid} Q0 {skill} {rank} {100 - rank} t")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("runs")
    return {"a": write_run(d / "a.trec", 1), "b": write_run(d / "b.trec", 2),
            "partial": write_run(d / "partial.trec", 1, drop=10)}


def compare(tmp_path, *args, capsys=None):
    out = tmp_path / "out.json"
    code = main(["compare", "--qrels", str(QRELS), *map(str, args), "--output", str(out)])
    return code, (json.loads(out.read_text()) if out.exists() else None)


def test_schema_and_values_equal_the_library(tmp_path, runs, capsys):
    code, result = compare(tmp_path, "--run", runs["a"], "--run", runs["b"],
                           "--permutations", 2000, "--bootstrap", 500)
    assert code == 0
    assert list(result) == ["baseline", "query_set", "queries", "tests", "runs"]
    assert result["baseline"] == "a" and result["query_set"] == "all-judged"
    assert result["queries"] == len(judged())
    assert result["tests"] == {"primary": "randomization", "randomization": "monte-carlo",
                               "permutations": 2000, "bootstrap": 500, "seed": 0,
                               "correction": "holm", "alpha": 0.05}
    entry = result["runs"]["b"]["NDCG@10"]
    assert list(result["runs"]["b"]) == ["Recall@5", "NDCG@10", "Completeness@5", "MRR@5"]
    assert list(entry) == ["baseline", "run", "delta", "ci95", "t", "p_t", "p_randomization",
                           "p_adjusted", "significant", "wins", "ties", "losses"]
    # the means are the recommended profile's (all-judged) numbers
    for name, key in (("a", "baseline"), ("b", "run")):
        assert entry[key] == skillret.evaluate(str(QRELS), str(runs[name]),
                                               "recommended")["NDCG@10"]
    a = skillret.per_query(str(QRELS), str(runs["a"]), "recommended")["NDCG@10"].to_numpy()
    b = skillret.per_query(str(QRELS), str(runs["b"]), "recommended")["NDCG@10"].to_numpy()
    from scipy.stats import ttest_rel
    assert entry["p_t"] == pytest.approx(ttest_rel(b, a).pvalue, rel=1e-3)
    assert (entry["wins"], entry["ties"], entry["losses"]) == (
        int((b > a).sum()), int((b == a).sum()), int((b < a).sum()))
    assert entry["delta"] == round(b.mean() - a.mean(), 5)
    assert entry["ci95"][0] < entry["delta"] < entry["ci95"][1]
    table = capsys.readouterr().out
    assert "baseline a, 98 queries (all-judged" in table and "NDCG@10" in table


def test_a_query_missing_from_a_run_scores_0(tmp_path, runs):
    code, result = compare(tmp_path, "--run", runs["a"], "--run", runs["partial"],
                           "--metric", "Recall@5", "--permutations", 500, "--bootstrap", 0)
    assert code == 0 and result["queries"] == len(judged())
    entry = result["runs"]["partial"]["Recall@5"]
    # the same rankings except 10 queries left out: those of the 10 that scored lose
    a = skillret.per_query(str(QRELS), str(runs["a"]), "recommended")["Recall@5"].to_numpy()
    assert entry["losses"] == int((a[:10] > 0).sum()) and entry["wins"] == 0
    assert entry["ci95"] is None


def test_same_seed_same_bytes(tmp_path, runs):
    outputs = []
    for seed in (3, 3, 4):
        out, md = tmp_path / f"o{len(outputs)}.json", tmp_path / f"o{len(outputs)}.md"
        assert main(["compare", "--qrels", str(QRELS), "--run", str(runs["a"]), "--run",
                     str(runs["b"]), "--permutations", "1000", "--bootstrap", "300",
                     "--seed", str(seed), "--output", str(out), "--markdown", str(md)]) == 0
        outputs.append(out.read_bytes() + md.read_bytes())
    assert outputs[0] == outputs[1] != outputs[2]


def test_a_run_against_itself_and_swapped(tmp_path, runs):
    code, same = compare(tmp_path, "--run", f"x={runs['a']}", "--run", f"y={runs['a']}",
                         "--permutations", 500, "--bootstrap", 100)
    for entry in same["runs"]["y"].values():
        assert entry["delta"] == 0 and entry["p_randomization"] == 1 and entry["p_t"] == 1
        assert entry["p_adjusted"] == 1 and entry["significant"] is False
        assert entry["wins"] == entry["losses"] == 0
    _, forward = compare(tmp_path, "--run", runs["a"], "--run", runs["b"],
                         "--permutations", 500, "--bootstrap", 100)
    _, backward = compare(tmp_path, "--run", runs["a"], "--run", runs["b"], "--baseline", "b",
                          "--permutations", 500, "--bootstrap", 100)
    for metric, f in forward["runs"]["b"].items():
        b = backward["runs"]["a"][metric]
        assert (b["delta"], b["t"]) == (-f["delta"], -f["t"])
        for key in ("p_t", "p_randomization", "p_adjusted", "significant", "ties"):
            assert b[key] == f[key]
        assert (b["wins"], b["losses"]) == (f["losses"], f["wins"])


def test_profile_and_corrections(tmp_path, runs):
    _, holm = compare(tmp_path, "--run", runs["a"], "--run", runs["b"], "--run",
                      runs["partial"], "--profile", "official", "--permutations", 300,
                      "--bootstrap", 0)
    assert len(holm["runs"]["b"]) == 15 and len(holm["runs"]["partial"]) == 15
    _, none = compare(tmp_path, "--run", runs["a"], "--run", runs["b"], "--run",
                      runs["partial"], "--profile", "official", "--permutations", 300,
                      "--bootstrap", 0, "--correction", "none")
    for run in ("b", "partial"):
        for metric, entry in none["runs"][run].items():
            assert entry["p_adjusted"] == entry["p_randomization"]
            assert holm["runs"][run][metric]["p_adjusted"] >= entry["p_randomization"]


def test_exact_randomization_when_the_draws_cover_every_sign_vector(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 s{i} 1\n" for i in range(6)))
    a = tmp_path / "a.trec"
    a.write_text("".join(f"q{i} Q0 s{i} 1 1.0 t\n" for i in range(6)))
    b = tmp_path / "b.trec"
    b.write_text("".join(f"q{i} Q0 x 1 2.0 t\nq{i} Q0 s{i} 2 1.0 t\n" for i in range(4)))
    out = tmp_path / "out.json"
    assert main(["compare", "--qrels", str(qrels), "--run", str(a), "--run", str(b),
                 "--metric", "MRR@5", "--permutations", "64", "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    entry = result["runs"]["b"]["MRR@5"]
    assert result["tests"]["randomization"] == "exact"
    # differences: -0.5 x 4, -1 x 2 (q4, q5 absent from b): only the all-minus and all-plus
    # sign vectors reach |sum| = 4: p = 2/64
    assert entry["p_randomization"] == 2 / 64
    assert (entry["wins"], entry["ties"], entry["losses"]) == (0, 0, 6)


@pytest.mark.parametrize("args,message", [
    (["--baseline", "nope"], "unknown baseline 'nope' (runs: a, b)"),
    (["--metric", "NDGC@10"], "unknown measure 'NDGC'"),
    (["--metric", "NDCG@10", "--profile", "official"], "--metric or --profile, not both"),
    (["--profile", "nope"], "unknown profile 'nope'"),
    (["--permutations", "0"], "permutations must be an integer >= 1"),
    (["--alpha", "1.5"], "alpha must be a number between 0 and 1"),
])
def test_bad_options_stop_with_one_line(tmp_path, runs, capsys, args, message):
    out, md = tmp_path / "out.json", tmp_path / "out.md"
    code = main(["compare", "--qrels", str(QRELS), "--run", str(runs["a"]), "--run",
                 str(runs["b"]), *args, "--output", str(out), "--markdown", str(md)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not md.exists()


def test_bad_inputs_stop_with_one_line(tmp_path, runs):
    other = tmp_path / "other.trec"
    other.write_text("zz-1 Q0 s 1 1.0 t\n")
    cases = [
        (["--run", str(runs["a"]), "--run", str(other)], "no query in common with the qrels"),
        (["--run", str(runs["a"]), "--run", str(runs["a"])], "two runs are named alike"),
        (["--run", str(runs["a"])], "at least two --run"),
        (["--run", str(runs["a"]), "--run", str(tmp_path / "missing.trec")], "missing.trec"),
    ]
    for args, message in cases:
        out = tmp_path / "out.json"
        result = subprocess.run([sys.executable, "-m", "skillret.cli", "compare", "--qrels",
                                 str(QRELS), *args, "--output", str(out)],
                                capture_output=True, text=True, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr and not out.exists()


def test_markdown_report(tmp_path, runs):
    md = tmp_path / "report.md"
    assert main(["compare", "--qrels", str(QRELS), "--run", str(runs["a"]), "--run",
                 str(runs["b"]), "--metric", "NDCG@10", "--permutations", "200", "--markdown",
                 str(md)]) == 0
    text = md.read_text()
    assert text.startswith("# Is it significant? Baseline: a\n")
    assert "| a (baseline) |" in text and "## Largest per-query changes: b, NDCG@10" in text


def test_same_bytes_whatever_the_blas_threads(tmp_path, runs):
    outputs = []
    for threads in ("1", "2"):
        out = tmp_path / f"t{threads}.json"
        subprocess.run([sys.executable, "-m", "skillret.cli", "compare", "--qrels", str(QRELS),
                        "--run", str(runs["a"]), "--run", str(runs["b"]), "--run",
                        str(runs["partial"]), "--profile", "mia5150", "--output", str(out)],
                       check=True, capture_output=True,
                       env={**os.environ, "OPENBLAS_NUM_THREADS": threads,
                            "OMP_NUM_THREADS": threads})
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_workspace_tables_of_the_registered_runs(tmp_path, runs):
    """What ``compare --rev`` reads at a revision, here the workspace (no git, no DVC; at a git
    revision through DVC: tests/pipeline/test_compare_revisions.py): each registered run's per-query table
    found through dvc.lock, and one line when a run, its lock entry or its table is missing."""
    from skillret.errors import ConfigError, InputError
    from skillret.pipeline.revisions import Revision

    (tmp_path / "outputs" / "per_query").mkdir(parents=True)
    for name in ("a", "b"):
        assert main(["score", "--qrels", str(QRELS), "--run", str(runs[name]), "-q",
                     "--per-query", str(tmp_path / f"outputs/per_query/{name}.tsv")]) == 0
    (tmp_path / "params.yaml").write_text("runs:\n  a: a.trec\n  b: b.trec\n  c: c.trec\n")
    (tmp_path / "dvc.lock").write_text(
        "schema: '2.0'\nstages:\n" + "".join(
            f"  score@{n}:\n    cmd: x\n    outs:\n    - path: outputs/per_query/{n}.tsv\n"
            for n in ("a", "b", "c")))
    files = Revision(tmp_path, None)
    tables = files.per_query_tables(["a", "b"], ["NDCG@10"])
    scores = {n: skillret.score(QRELS, runs[n], "official").metrics["official"]["NDCG@10"]
              for n in ("a", "b")}
    assert list(tables) == ["a", "b"]
    for name, table in tables.items():
        rows = csv_rows(tmp_path / f"outputs/per_query/{name}.tsv")
        expected = dict(sorted((row["query_id"], row["NDCG@10"]) for row in rows))
        assert dict(zip(table.query_ids.tolist(), table.values["NDCG@10"].tolist())) == expected
        assert len(expected) == 98
        assert round(sum(expected.values()) / 98, 5) == scores[name]
        assert table.source == f"outputs/per_query/{name}.tsv"
    with pytest.raises(ConfigError, match=r"workspace: no run named 'x' in params.yaml "
                                          r"\(registered or fused: a, b, c\)"):
        files.per_query_tables(["x"], ["NDCG@10"])
    with pytest.raises(InputError, match=r"workspace:outputs/per_query/c.tsv: per-query table "
                                         r"not in the workspace .*dvc pull outputs/per_query"):
        files.per_query_tables(["c"], ["NDCG@10"])
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages: {}\n")
    files = Revision(tmp_path, None)  # a revision's dvc.lock is read once: the next command's
    with pytest.raises(InputError, match=r"workspace:dvc.lock: no per-query table of run 'a'"):
        files.per_query_tables(["a"], ["NDCG@10"])


def csv_rows(path: Path) -> list[dict]:
    import csv

    with open(path, newline="") as fh:
        return [{k: (float(v) if k == "NDCG@10" else v) for k, v in row.items()}
                for row in csv.DictReader(fh, delimiter="\t")]
