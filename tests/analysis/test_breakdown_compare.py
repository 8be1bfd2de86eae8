"""compare --breakdown: the paired tests within each stratum, adjusted over the whole family.

Oracles: each stratum's test equals the comparison of the same runs over that stratum's queries
alone (the qrels cut to them), its delta and wins/ties/losses equal the per-query differences
grouped by hand (pandas), and the adjusted p-values equal Holm's step-down computed here over
every (facet, stratum, run, metric).
"""

from __future__ import annotations

import json

import cli_server
import numpy as np
import pytest

import skillret
from skillret.analysis import breakdown as bd
from skillret import api
from skillret.analysis import compare as cmp

from test_breakdown import SKILL_CATEGORIES, write_case

METRICS = ["Recall@5", "NDCG@10", "MRR@5"]


def cli(*args):
    """``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)."""
    return cli_server.run(*args)


def other_run(run: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {q: {s: float(v + rng.integers(-2, 3)) for s, v in row.items()}
            for q, row in run.items()}


def holm(p: list[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def comparison_of(qrels, runs: dict, **settings):
    tables = {n: api.per_query_values(qrels, r, METRICS, n) for n, r in runs.items()}
    base = next(iter(tables))
    return cmp.compare((base, tables[base]), {n: t for n, t in tables.items() if n != base},
                       METRICS, **settings)[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_each_stratum_is_the_comparison_of_its_queries(tmp_path, seed):
    qrels, run, _ = write_case(tmp_path, seed)
    runs = {"base": run, "a": other_run(run, seed + 10), "b": other_run(run, seed + 20)}
    settings = dict(permutations=500, bootstrap=200, seed=7)
    comparison = comparison_of(qrels, runs, **settings)
    plan = bd.load_facets(["n_required", "skill_category", "domain"], tmp_path / "facets.jsonl",
                   tmp_path / "skills.jsonl")
    result = bd.stratified_tests(comparison, plan, skillret.read_qrels(str(tmp_path / "qrels.txt")),
                                 **settings)

    # by hand: every judged query's strata, then the per-query differences grouped
    values = {n: skillret.per_query(qrels, r, profile="recommended").set_index("query_id")
              for n, r in runs.items()}
    strata = by_hand_strata(qrels, tmp_path)
    family = []
    for facet, cells in result.items():
        assert sorted(cells) == sorted({s for q in qrels for s in strata[facet][q]})
        for stratum, cell in cells.items():
            members = sorted(q for q in qrels if stratum in strata[facet][q])
            assert cell["queries"] == len(members)
            cut = {q: qrels[q] for q in members}
            alone = comparison_of(cut, {n: {q: r[q] for q in members if q in r}
                                        for n, r in runs.items()}, **settings)
            for name in ("a", "b"):
                for metric in METRICS:
                    got, want = cell["runs"][name][metric], alone.result["runs"][name][metric]
                    same = {k: v for k, v in got.items()
                            if k not in ("p_adjusted", "significant")}
                    assert same == {k: v for k, v in want.items() if k in same}
                    d = (values[name].loc[members, metric]
                         - values["base"].loc[members, metric])
                    assert got["delta"] == pytest.approx(d.mean(), abs=1e-5)
                    assert (got["wins"], got["ties"], got["losses"]) == (
                        int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
                    family.append((got, want["p_randomization"]))
    adjusted = holm([p for _, p in family])
    for (got, _), p in zip(family, adjusted):
        assert got["p_adjusted"] == pytest.approx(p, rel=1e-3)
        assert got["significant"] == (got["p_adjusted"] <= 0.05)


def by_hand_strata(qrels, tmp_path) -> dict:
    facets = {json.loads(line)["query_id"]: json.loads(line)
              for line in (tmp_path / "facets.jsonl").read_text().splitlines()}
    out = {"n_required": {}, "skill_category": {}, "domain": {}}
    for q, judged in qrels.items():
        out["n_required"][q] = {str(sum(g >= 2 for g in judged.values()))}
        out["skill_category"][q] = {SKILL_CATEGORIES.get(s, "(missing)")
                                    for s, g in judged.items() if g >= 1} or {"(none)"}
        out["domain"][q] = {facets.get(q, {}).get("domain") or "(missing)"}
    return out


def test_compare_breakdown_on_the_command_line(tmp_path):
    qrels, run, _ = write_case(tmp_path)
    (tmp_path / "other.trec").write_text("".join(
        f"{q} Q0 {s} 0 {v} r\n" for q, row in other_run(run, 3).items() for s, v in row.items()))
    out = tmp_path / "compare.json"
    result = cli("compare", "--qrels", tmp_path / "qrels.txt", "--run",
                 f"base={tmp_path / 'run.trec'}", "--run", f"other={tmp_path / 'other.trec'}",
                 "--permutations", 300, "--bootstrap", 100, "--breakdown", "n_required",
                 "--breakdown", "turns", "--facets", tmp_path / "facets.csv", "-o", out)
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert list(data["breakdown"]) == ["n_required", "turns"]
    assert list(data["breakdown"]["turns"]) == ["1", "2", "10", "(missing)"]
    assert "within strata: p adjusted over all" in result.stdout
    again = tmp_path / "again.json"
    cli("compare", "--qrels", tmp_path / "qrels.txt", "--run", f"base={tmp_path / 'run.trec'}",
        "--run", f"other={tmp_path / 'other.trec'}", "--permutations", 300, "--bootstrap", 100,
        "--breakdown", "n_required", "--breakdown", "turns", "--facets",
        tmp_path / "facets.csv", "-o", again)
    assert again.read_bytes() == out.read_bytes()          # seeded: the same bytes


@pytest.mark.parametrize("args, message", [
    (["--breakdown", "bogus"], "unknown facet 'bogus'"),
    (["--breakdown", "skill_category"], "facet 'skill_category' needs --skills FILE"),
    (["--breakdown", "domain", "--facets", "{d}/noid.csv"], "noid.csv: no id column"),
])
def test_compare_breakdown_bad_input(tmp_path, args, message):
    write_case(tmp_path)
    (tmp_path / "noid.csv").write_text("name,domain\nq0,ops\n")
    out = tmp_path / "compare.json"
    result = cli("compare", "--qrels", tmp_path / "qrels.txt", "--run",
                 f"a={tmp_path / 'run.trec'}", "--run", f"b={tmp_path / 'run.trec'}",
                 *[a.format(d=tmp_path) for a in args], "-o", out)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()
