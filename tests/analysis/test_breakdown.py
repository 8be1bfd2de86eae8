"""Breakdowns by query facet: each stratum's numbers against the per-query values grouped by hand.

The oracle is ``skillret.per_query`` (the values a profile averages) joined by hand to the facets
and grouped with pandas; the breakdown must give the same means, the same query counts, and, for
a facet with one value, exactly the profile's own numbers.
"""

from __future__ import annotations

import json

import cli_server
import numpy as np
import pandas as pd
import pytest

import skillret
from skillret.analysis import breakdown as bd

SKILL_CATEGORIES = {f"s{i}": ["git", "testing", "ci-cd", "writing"][i % 4] for i in range(12)}


def cli(*args):
    """``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)."""
    return cli_server.run(*args)


def make_case(seed: int):
    """Qrels, a run, skills and a facets table with every edge a breakdown meets:
    q0 needs two skills of different categories, q1 is missing from the facets file, q2 has only
    a grade-0 judgment (no relevant skill), q3 is judged but absent from the run, q4's relevant
    skill is missing from the skills file, u1 is in the run without judgments."""
    rng = np.random.default_rng(seed)
    skills = list(SKILL_CATEGORIES)
    qrels: dict[str, dict[str, int]] = {
        "q0": {"s0": 2, "s1": 2, "s5": 1},
        "q1": {"s2": 2},
        "q2": {"s3": 0},
        "q3": {"s4": 2, "s8": 1},
        "q4": {"zz": 2},
    }
    for i in range(5, 30):
        chosen = rng.choice(skills, size=int(rng.integers(1, 4)), replace=False)
        qrels[f"q{i}"] = {s: int(rng.choice([1, 2, 2])) for s in chosen}
    run = {}
    for q in [q for q in qrels if q != "q3"] + ["u1"]:
        depth = int(rng.integers(0, 12))
        pool = skills + ["zz"]
        chosen = rng.choice(pool, size=min(depth, len(pool)), replace=False)
        run[q] = {s: float(rng.integers(0, 6)) for s in chosen}   # ties on purpose
    facets = []
    for i, q in enumerate(qrels):
        if q == "q1":
            continue
        facets.append({"query_id": q, "domain": ["ops", "dev", "docs"][i % 3],
                       "turns": [1, 2, 10][i % 3], "score": [0.5, 1.0, 2.25][i % 3],
                       "hard": bool(i % 2), "note": None if i % 5 == 0 else f"n{i % 2}"})
    facets.append({"query_id": "extra", "domain": "ops", "turns": 1, "score": 0.5,
                   "hard": True, "note": "n0"})
    return qrels, run, facets


def write_case(tmp_path, seed=0):
    qrels, run, facets = make_case(seed)
    (tmp_path / "skills.jsonl").write_text("".join(
        json.dumps({"id": s, "name": s, "category": c}) + "\n"
        for s, c in SKILL_CATEGORIES.items()))
    (tmp_path / "facets.jsonl").write_text("".join(json.dumps(f) + "\n" for f in facets))
    frame = pd.DataFrame(facets)
    frame.to_csv(tmp_path / "facets.csv", index=False)
    frame.to_csv(tmp_path / "facets.tsv", index=False, sep="\t")
    frame.to_parquet(tmp_path / "facets.parquet", index=False)
    (tmp_path / "qrels.txt").write_text("".join(
        f"{q} 0 {s} {g}\n" for q, row in qrels.items() for s, g in row.items()))
    (tmp_path / "run.trec").write_text("".join(
        f"{q} Q0 {s} 0 {v} r\n" for q, row in run.items() for s, v in row.items()))
    (tmp_path / "run_empty_u1.trec").write_text("")
    return qrels, run, facets


def by_hand(qrels, run, facets, profile, facet, level=1):
    """The oracle: per-query values of the profile, joined to each query's strata, grouped."""
    values = skillret.per_query(qrels, run, profile=profile, relevance_level=level)
    strata = []
    known = {f["query_id"]: f for f in facets}
    for q in values["query_id"]:
        judged = qrels[q]
        if facet == "n_required":
            strata.append([str(sum(g >= 2 for g in judged.values()))])
        elif facet == "n_relevant":
            strata.append([str(sum(g >= level for g in judged.values()))])
        elif facet == "skill_category":
            cats = {SKILL_CATEGORIES.get(s, "(missing)") for s, g in judged.items() if g >= level}
            strata.append(sorted(cats) or ["(none)"])
        else:
            value = known.get(q, {}).get(facet)
            strata.append([bd.label(value)])
    values["stratum"] = strata
    long = values.explode("stratum")
    metrics = [c for c in values.columns if "@" in c]
    grouped = long.groupby("stratum")
    out = grouped[metrics].mean()
    out["queries"] = grouped.size()
    return out


FACETS = ["n_required", "n_relevant", "skill_category", "domain", "turns", "score", "hard",
          "note"]


@pytest.mark.parametrize("profile", ["recommended", "official", "mia5150"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_strata_equal_per_query_values_grouped_by_hand(tmp_path, profile, seed):
    qrels, run, facets = write_case(tmp_path, seed)
    scores = skillret.score(qrels, run, [profile])
    plan = bd.load_facets(FACETS, tmp_path / "facets.jsonl", tmp_path / "skills.jsonl")
    result = bd.breakdown(scores, plan)
    assert list(result) == FACETS
    for facet in FACETS:
        expected = by_hand(qrels, run, facets, profile, facet)
        assert sorted(result[facet]) == sorted(expected.index), facet
        for stratum, row in result[facet].items():
            assert row["queries"] == expected.loc[stratum, "queries"]
            for metric, value in row.items():
                if metric != "queries":
                    assert value == pytest.approx(expected.loc[stratum, metric], abs=5.1e-6), \
                        (facet, stratum, metric)


def test_the_edge_queries_land_where_they_should(tmp_path):
    qrels, run, facets = write_case(tmp_path)
    scores = skillret.score(qrels, run, ["recommended"])
    plan = bd.load_facets(["skill_category", "domain", "n_relevant"], tmp_path / "facets.jsonl",
                   tmp_path / "skills.jsonl")
    result = bd.breakdown(scores, plan)
    per_query = skillret.per_query(qrels, run, profile="recommended").set_index("query_id")
    # q0 needs s0 (git) and s1 (testing): it counts once in each.
    git_queries = {q for q, row in qrels.items()
                   if any(SKILL_CATEGORIES.get(s) == "git" and g >= 1 for s, g in row.items())}
    assert "q0" in git_queries
    assert result["skill_category"]["git"]["queries"] == len(git_queries)
    # q2 has no relevant skill; q4's relevant skill is not in the skills file.
    assert result["skill_category"]["(none)"]["queries"] == 1
    assert result["skill_category"]["(none)"]["MRR@5"] == round(per_query.loc["q2", "MRR@5"], 5)
    assert result["skill_category"]["(missing)"]["queries"] == 1
    assert result["skill_category"]["(missing)"]["Recall@5"] == round(
        per_query.loc["q4", "Recall@5"], 5)
    # q1 is not in the facets file: the only query under (missing).
    assert result["domain"]["(missing)"] == {
        "queries": 1, **{m: round(per_query.loc["q1", m], 5) for m in
                         ("Recall@5", "NDCG@10", "Completeness@5", "MRR@5")}}
    assert "extra" not in json.dumps(result)            # rows for unjudged queries are ignored
    assert result["n_relevant"]["0"]["queries"] == 1     # q2
    # sums of stratum sizes: every judged query once for a scalar facet
    assert sum(r["queries"] for r in result["domain"].values()) == len(qrels)
    assert list(result["skill_category"])[-2:] == ["(none)", "(missing)"]
    counts = bd.check_coverage(plan, skillret.read_qrels(str(tmp_path / "qrels.txt")))
    assert counts["facets"]["missing"] == 1 and counts["facets"]["examples"] == ["q1"]
    assert counts["skills"]["missing"] == 1 and counts["skills"]["examples"] == ["zz"]


@pytest.mark.parametrize("profile", ["recommended", "official"])
def test_one_stratum_gives_back_the_profile_exactly(tmp_path, profile):
    """Same values, same arithmetic (run order for official), same rounding: the same bits."""
    qrels, run, facets = write_case(tmp_path, seed=3)
    rows = [{"query_id": q, "all": "yes"} for q in qrels]
    (tmp_path / "one.csv").write_text("query_id,all\n" + "".join(
        f"{r['query_id']},{r['all']}\n" for r in rows))
    for rounding in (5, None):
        define = {"mine": {"metrics": ["NDCG@10", "MAP@5", "Precision@3", "MRR@10"],
                           "query_set": "run-judged" if profile == "official" else "all-judged",
                           "rounding": rounding}}
        scores = skillret.score(tmp_path / "qrels.txt", tmp_path / "run.trec", ["mine"],
                                define=define)
        result = bd.breakdown(scores, bd.load_facets(["all"], tmp_path / "one.csv"))
        evaluated = scores.query_counts["evaluated"]["mine"]
        assert result["all"]["yes"] == {"queries": evaluated, **scores.metrics["mine"]}


def test_the_first_profile_and_its_relevance_level(tmp_path):
    qrels, run, facets = write_case(tmp_path)
    scores = skillret.score(qrels, run, ["official", "recommended"], relevance_level=2)
    plan = bd.load_facets(["n_relevant", "skill_category"], skills=tmp_path / "skills.jsonl")
    result = bd.breakdown(scores, plan)
    assert set(next(iter(result["n_relevant"].values()))) == {"queries", *scores.metrics[
        "official"]}
    expected = by_hand(qrels, run, facets, "official", "n_relevant", level=2)
    assert {s: r["queries"] for s, r in result["n_relevant"].items()} == \
        expected["queries"].to_dict()
    expected = by_hand(qrels, run, facets, "official", "skill_category", level=2)
    assert {s: r["queries"] for s, r in result["skill_category"].items()} == \
        expected["queries"].to_dict()
    second = bd.breakdown(scores, plan, "recommended")
    assert set(next(iter(second["n_relevant"].values()))) == {"queries", "Recall@5", "NDCG@10",
                                                               "Completeness@5", "MRR@5"}


@pytest.mark.parametrize("suffix", ["csv", "tsv", "parquet"])
def test_every_format_gives_the_same_breakdown(tmp_path, suffix):
    qrels, run, _ = write_case(tmp_path)
    scores = skillret.score(qrels, run, ["recommended"])
    facets = ["domain", "turns", "score", "hard", "note"]
    reference = bd.breakdown(scores, bd.load_facets(facets, tmp_path / "facets.jsonl"))
    other = bd.breakdown(scores, bd.load_facets(facets, tmp_path / f"facets.{suffix}"))
    assert json.dumps(other) == json.dumps(reference)


def test_strata_order_numeric_then_text_missing_last(tmp_path):
    qrels, run, _ = write_case(tmp_path)
    scores = skillret.score(qrels, run, ["recommended"])
    result = bd.breakdown(scores, bd.load_facets(["turns", "score", "hard", "note", "domain"],
                                          tmp_path / "facets.jsonl"))
    assert list(result["turns"]) == ["1", "2", "10", "(missing)"]      # numeric, not "10" < "2"
    assert list(result["score"]) == ["0.5", "1", "2.25", "(missing)"]  # 1.0 is reported as 1
    assert list(result["hard"]) == ["false", "true", "(missing)"]
    assert list(result["note"]) == ["n0", "n1", "(missing)"]           # null counts as missing
    assert list(result["domain"]) == ["dev", "docs", "ops", "(missing)"]
    assert bd.stratum_order(["b", "10", "(none)", "a", "(missing)"]) == \
        ["10", "a", "b", "(none)", "(missing)"]


def test_skillret_queries_jsonl_works_as_it_is(tmp_path):
    """SkillRet's queries file is keyed by 'id' and holds a list ('labels'): fine until asked."""
    rows = [{"id": "q0", "query": "fix it", "labels": [{"id": "s0", "relevance": 2}],
             "lang": "en"},
            {"id": "q1", "query": "ship it", "labels": [{"id": "s2", "relevance": 2}],
             "lang": "de"}]
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = skillret.score(tmp_path / "queries.jsonl", {"q0": {"s0": 1.0}, "q1": {"s9": 1.0}},
                            ["recommended"])
    result = bd.breakdown(scores, bd.load_facets(["lang"], tmp_path / "queries.jsonl"))
    assert result["lang"]["en"]["Recall@5"] == 1.0 and result["lang"]["de"]["Recall@5"] == 0.0
    with pytest.raises(skillret.InputError, match="facet 'labels' holds a list"):
        bd.load_facets(["labels"], tmp_path / "queries.jsonl")


# --- the command line -------------------------------------------------------------------------

def test_score_breakdown_writes_the_key_and_prints_a_table_per_facet(tmp_path):
    write_case(tmp_path)
    out = tmp_path / "m.json"
    result = cli("score", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
                 "--profile", "recommended", "--profile", "official",
                 "--breakdown", "n_required", "--breakdown", "skill_category",
                 "--breakdown", "turns", "--facets", tmp_path / "facets.parquet",
                 "--skills", tmp_path / "skills.jsonl", "-o", out)
    assert result.returncode == 0, result.stderr
    metrics = json.loads(out.read_text())
    assert list(metrics) == ["recommended", "official", "queries", "breakdown"]
    assert list(metrics["breakdown"]) == ["n_required", "skill_category", "turns"]
    assert list(metrics["breakdown"]["turns"]) == ["1", "2", "10", "(missing)"]
    assert list(metrics["breakdown"]["turns"]["1"]) == ["queries", "Recall@5", "NDCG@10",
                                                        "Completeness@5", "MRR@5"]
    for facet in ("n_required", "skill_category", "turns"):
        assert f"recommended by {facet}: 30 queries (all-judged" in result.stdout
    assert "facets.parquet: 1 of 30 judged queries have no row" in result.stderr
    assert "skills.jsonl: 1 of" in result.stderr
    again = tmp_path / "again.json"
    cli("score", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
        "--profile", "recommended", "--profile", "official", "--breakdown", "n_required",
        "--breakdown", "skill_category", "--breakdown", "turns", "--facets",
        tmp_path / "facets.jsonl", "--skills", tmp_path / "skills.jsonl", "-q", "-o", again)
    assert again.read_bytes() == out.read_bytes()      # same content from JSONL and Parquet


@pytest.mark.parametrize("args, message", [
    (["--breakdown", "bogus"], "unknown facet 'bogus': built in are n_required, n_relevant, "
                               "skill_category"),
    (["--breakdown", "bogus", "--facets", "{d}/facets.csv"],
     "facets.csv: no field 'bogus' to break down by"),
    (["--breakdown", "domain", "--facets", "{d}/noid.csv"],
     "noid.csv: no id column in this facets file (looked for query_id, qid, id, _id; found "
     "name, domain)"),
    (["--breakdown", "skill_category"], "facet 'skill_category' needs --skills FILE"),
    (["--breakdown", "tags", "--facets", "{d}/lists.jsonl"],
     "lists.jsonl:2: facet 'tags' holds a list, not a single value"),
    (["--breakdown", "meta", "--facets", "{d}/lists.jsonl"],
     "lists.jsonl:1: facet 'meta' holds an object, not a single value"),
    (["--breakdown", "tags", "--facets", "{d}/lists.parquet"],
     "lists.parquet: facet 'tags' holds lists or objects"),
    (["--breakdown", "domain", "--facets", "{d}/twice.jsonl"],
     "twice.jsonl:2: id 'q0' appears twice (first on line 1)"),
    (["--breakdown", "skill_category", "--skills", "{d}/nocat.jsonl"],
     "nocat.jsonl: no 'category' field in the skills file"),
    (["--breakdown", "domain", "--facets", "{d}/facets.txt"],
     "facets.txt: cannot tell the format of this facets file"),
    (["--breakdown", "domain", "--facets", "{d}/absent.csv"], "absent.csv: no such facets file"),
])
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, args, message):
    write_case(tmp_path)
    (tmp_path / "noid.csv").write_text("name,domain\nq0,ops\n")
    (tmp_path / "lists.jsonl").write_text('{"id": "q0", "tags": "a", "meta": {"a": 1}}\n'
                                          '{"id": "q1", "tags": ["a", "b"]}\n')
    pd.DataFrame({"id": ["q0"], "tags": [["a"]]}).to_parquet(tmp_path / "lists.parquet")
    (tmp_path / "twice.jsonl").write_text('{"id": "q0", "domain": "a"}\n'
                                          '{"id": "q0", "domain": "b"}\n')
    (tmp_path / "nocat.jsonl").write_text('{"id": "s0", "name": "x"}\n')
    (tmp_path / "facets.txt").write_text("query_id,domain\n")
    out, per_query = tmp_path / "m.json", tmp_path / "pq.tsv"
    result = cli("score", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
                 *[a.format(d=tmp_path) for a in args], "-o", out, "--per-query", per_query)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not out.exists() and not per_query.exists()


def test_validate_reports_what_counts_under_missing(tmp_path):
    write_case(tmp_path)
    report = tmp_path / "report.json"
    result = cli("validate", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
                 "--facets", tmp_path / "facets.csv", "--skills", tmp_path / "skills.jsonl",
                 "--report", report)
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    assert data["facet_files"]["facets"] == {
        "path": (tmp_path / "facets.csv").as_posix(), "judged_queries": 30, "missing": 1,
        "examples": ["q1"]}
    assert data["facet_files"]["skills"]["missing"] == 1
    assert any("1 of 30 judged queries have no row (counted under (missing))" in w
               for w in data["warnings"])
    strict = cli("validate", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
                 "--facets", tmp_path / "facets.csv", "--strict", "--report",
                 tmp_path / "strict.json", "--normalized", tmp_path / "run.parquet")
    assert strict.returncode == 2 and "1 of 30 judged queries have no row" in strict.stderr
    assert not (tmp_path / "strict.json").exists() and not (tmp_path / "run.parquet").exists()


def test_a_breakdown_keeps_the_scoring_process_lean(tmp_path):
    """No pandas or DVC in a scoring process, with a breakdown from every kind of file."""
    write_case(tmp_path)
    code = ("import sys; from skillret import cli; sys.exit(cli.main(['score', '--qrels', "
            f"{str(tmp_path / 'qrels.txt')!r}, '--run', {str(tmp_path / 'run.trec')!r}, '-q', "
            f"'--breakdown', 'skill_category', '--skills', {str(tmp_path / 'skills.jsonl')!r}, "
            f"'--breakdown', 'turns', '--facets', {{facets!r}}]) or "
            "print(sorted(m for m in ('pandas', 'dvc') if m in sys.modules)))")
    for suffix in ("jsonl", "csv", "parquet"):
        # a process of its own, forked from one that imported neither (tests/cli_server.py)
        result = cli_server.run_code(code.format(facets=str(tmp_path / f"facets.{suffix}")))
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-1] == "[]", suffix


def test_line_numbers_only_where_they_are_right(tmp_path):
    """JSONL lines count blank lines and keep U+2028 inside a value; a CSV row's line is given
    only when every line holds one row."""
    (tmp_path / "f.jsonl").write_text('{"id": "a", "t": "x\u2028y"}\n\n{"id": "b", "t": "z"}\n'
                                      '{"id": "a", "t": "w"}\n', encoding="utf-8")
    with pytest.raises(skillret.InputError, match=r"f.jsonl:4: id 'a' appears twice \(first on "
                                                  r"line 1\)"):
        bd.read_keyed(tmp_path / "f.jsonl", bd.QUERY_ID_COLUMNS, "facets")
    (tmp_path / "plain.csv").write_text("id,t\na,x\nb,y\na,z\n")
    with pytest.raises(skillret.InputError, match=r"plain.csv:4: id 'a' appears twice"):
        bd.read_keyed(tmp_path / "plain.csv", bd.QUERY_ID_COLUMNS, "facets")
    (tmp_path / "spans.csv").write_text('id,t\na,"two\nlines"\nb,y\na,z\n')
    with pytest.raises(skillret.InputError, match=r"spans.csv: id 'a' appears twice$"):
        bd.read_keyed(tmp_path / "spans.csv", bd.QUERY_ID_COLUMNS, "facets")
    (tmp_path / "g.jsonl").write_text('{"id": "a", "t": "x\u2028y"}\n\n{"id": "b", "t": 1}\n',
                                      encoding="utf-8")
    table = bd.read_keyed(tmp_path / "g.jsonl", bd.QUERY_ID_COLUMNS, "facets")
    assert table.ids == ["a", "b"] and table.values("t") == ["x\u2028y", 1]
    assert table.lines == [1, 3]


def test_plot_records_follow_the_breakdown(tmp_path):
    qrels, run, _ = write_case(tmp_path)
    scores = skillret.score(qrels, run, ["recommended"])
    result = bd.breakdown(scores, bd.load_facets(["n_required", "turns"], tmp_path / "facets.jsonl"))
    (tmp_path / "metrics.json").write_text(json.dumps({"breakdown": result}))
    records = bd.collect_plot({"r": tmp_path / "metrics.json"})
    assert len(records) == sum(len(strata) for strata in result.values()) * 4
    assert records[0] == {"run": "r", "facet": "n_required", "stratum": next(iter(result["n_required"])),
                          "metric": "Recall@5", "value": next(iter(
                              result["n_required"].values()))["Recall@5"],
                          "queries": next(iter(result["n_required"].values()))["queries"]}
    assert [r["stratum"] for r in records if r["facet"] == "turns" and r["metric"] == "MRR@5"] \
        == list(result["turns"])


def test_params_give_the_pipeline_breakdown_and_options_override_it(tmp_path):
    write_case(tmp_path)
    (tmp_path / "params.yaml").write_text(
        "data:\n"
        f"  skills: {tmp_path / 'skills.jsonl'}\n"
        f"  queries: {tmp_path / 'facets.jsonl'}\n"
        "eval:\n  profiles: [official, recommended]\n"
        "  breakdown: [skill_category, domain]\n  breakdown_profile: recommended\n")
    args = ["score", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
            "--params", tmp_path / "params.yaml", "-q", "-o"]
    assert cli(*args, tmp_path / "a.json").returncode == 0
    a = json.loads((tmp_path / "a.json").read_text())
    assert list(a["breakdown"]) == ["skill_category", "domain"]
    assert list(a["breakdown"]["domain"]["ops"]) == ["queries", "Recall@5", "NDCG@10",
                                                     "Completeness@5", "MRR@5"]
    # --breakdown replaces eval.breakdown (the first profile's); the files still come from
    # the params' data section
    assert cli(*args, tmp_path / "b.json", "--breakdown", "skill_category").returncode == 0
    b = json.loads((tmp_path / "b.json").read_text())
    assert list(b["breakdown"]) == ["skill_category"]
    assert "NDCG@15" in b["breakdown"]["skill_category"]["git"]
    # a breakdown profile not scored: the first profile's
    assert cli(*args, tmp_path / "c.json", "--profile", "official").returncode == 0
    c = json.loads((tmp_path / "c.json").read_text())
    assert c["breakdown"]["skill_category"] == b["breakdown"]["skill_category"]
    # nothing asked, nothing read: a params file without eval.breakdown
    (tmp_path / "plain.yaml").write_text("eval:\n  profiles: [official]\n")
    assert cli("score", "--qrels", tmp_path / "qrels.txt", "--run", tmp_path / "run.trec",
               "--params", tmp_path / "plain.yaml", "-q", "-o", tmp_path / "d.json"
               ).returncode == 0
    assert "breakdown" not in json.loads((tmp_path / "d.json").read_text())
