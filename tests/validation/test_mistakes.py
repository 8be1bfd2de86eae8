"""The mistakes researchers really make (#21), each made as a user's tool makes it, by a small
script: caught, explained, and fixed by doing what the message says.

Swapped score and rank columns, swapped query and skill ids, qrels and run given the other way
round, a table without its header, columns named otherwise; every hint a message prints is
followed and gets further.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import cli_server

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=None):
    """``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)."""
    return cli_server.run(*args, cwd=cwd)


def retriever_output(n_queries: int = 24, depth: int = 20) -> tuple[dict, dict]:
    """What a retriever gives: {query: {skill: score}} (uuid-like skill ids, 'q-00001'
    queries) and the qrels, two relevant skills per query near the top."""
    import random
    rng = random.Random(7)
    skills = [f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4c84-a018-"
              f"{rng.getrandbits(48):012x}" for _ in range(60)]
    run, qrels = {}, {}
    for i in range(1, n_queries + 1):
        query = f"q-{i:05d}"
        ranked = rng.sample(skills, depth)
        run[query] = {s: round(20.0 - j * 0.731 - rng.random() * 0.1, 6)
                      for j, s in enumerate(ranked)}
        qrels[query] = {ranked[rng.randrange(3)]: 2, ranked[3 + rng.randrange(5)]: 1}
    return run, qrels


def write_trec(path: Path, run: dict, line) -> Path:
    """A TREC run as a tool writes it: ``line(query, skill, rank, score)`` for each result."""
    with open(path, "w") as fh:
        for query, ranking in run.items():
            ordered = sorted(ranking.items(), key=lambda kv: -kv[1])
            for rank, (skill, score) in enumerate(ordered, 1):
                fh.write(line(query, skill, rank, score) + "\n")
    return path


@pytest.fixture
def made(tmp_path):
    run, qrels = retriever_output()
    with open(tmp_path / "qrels.jsonl", "w") as fh:
        for query, judged in qrels.items():
            for skill, grade in judged.items():
                fh.write(json.dumps({"query_id": query, "skill_id": skill,
                                     "relevance": grade}) + "\n")
    write_trec(tmp_path / "good.trec", run, lambda q, s, r, v: f"{q} Q0 {s} {r} {v} mine")
    return tmp_path, run, qrels


def follow(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a shell command a message printed, as the user would paste it."""
    return subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True)


def metrics_of(result: subprocess.CompletedProcess) -> str:
    """The NDCG row of a score table."""
    return next(line for line in result.stdout.splitlines() if line.strip().startswith("NDCG"))


# ------------------------------------------------------------------ score and rank swapped
def test_score_and_rank_swapped_in_a_trec_run(made):
    """``qid Q0 doc score rank tag``: validate warns (strict: fails), score warns on stderr,
    and the awk command in the message gives back the right numbers."""
    tmp, run, _ = made
    write_trec(tmp / "swapped.trec", run, lambda q, s, r, v: f"{q} Q0 {s} {v} {r} mine")
    result = cli("validate", "--qrels", tmp / "qrels.jsonl", "--run", "swapped.trec", cwd=tmp)
    assert result.returncode == 0, result.stderr
    assert "1 warning(s)" in result.stdout
    warning = result.stderr.strip()
    assert warning.startswith("skillret-eval: warning: swapped.trec:1: the score and rank "
                              "columns look swapped")
    assert "rank column (field 4)" in warning and "score column (field 5)" in warning
    assert "24 of 24 queries" in warning

    strict = cli("validate", "--strict", "--qrels", tmp / "qrels.jsonl", "--run",
                 "swapped.trec", cwd=tmp)
    assert strict.returncode == 2 and "look swapped" in strict.stderr

    scored = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "swapped.trec", cwd=tmp)
    assert scored.returncode == 0
    assert "look swapped" in scored.stderr and len(scored.stderr.splitlines()) == 1

    fix = re.search(r"e\.g\. (awk .*? > fixed\.trec)", warning).group(1)
    assert follow(fix, tmp).returncode == 0
    fixed = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "fixed.trec", cwd=tmp)
    good = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "good.trec", cwd=tmp)
    assert fixed.stderr == "" and metrics_of(fixed) == metrics_of(good)
    assert metrics_of(fixed) != metrics_of(scored)


def test_integer_columns_swapped(made):
    """Both columns integers (a count as the score): the scores are 1, 2, 3, ..."""
    tmp, run, _ = made
    write_trec(tmp / "counts.trec", run, lambda q, s, r, v: f"{q} Q0 {s} {100 - r} {r} mine")
    result = cli("validate", "--qrels", tmp / "qrels.jsonl", "--run", "counts.trec", cwd=tmp)
    assert "counts.trec:1: the score and rank columns look swapped: the score column (field " \
           "5) holds 1, 2, 3, ... down the ranking of 24 of 24 queries" in result.stderr
    fix = re.search(r"e\.g\. (awk .*? > fixed\.trec)", result.stderr).group(1)
    assert follow(fix, tmp).returncode == 0
    fixed = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "fixed.trec", cwd=tmp)
    good = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "good.trec", cwd=tmp)
    assert fixed.stderr == "" and metrics_of(fixed) == metrics_of(good)


def test_scores_that_order_against_the_ranks(made):
    """Distances as scores (lower is better) beside right ranks: the score order contradicts
    the rank column in every query; the message's command negates them."""
    tmp, run, _ = made
    write_trec(tmp / "distances.trec", run,
               lambda q, s, r, v: f"{q} Q0 {s} {r} {0.05 * r + 0.001 * len(s):.6f} mine")
    result = cli("validate", "--qrels", tmp / "qrels.jsonl", "--run", "distances.trec",
                 cwd=tmp)
    assert "the score column (field 5) orders the results against the rank column (field " \
           "4): ordered by score, 24 of 24 queries have ranks going down" in result.stderr
    assert "the rank column disagrees" not in result.stderr  # one warning says it all
    fix = re.search(r"e\.g\. (awk .*? > fixed\.trec)", result.stderr).group(1)
    assert follow(fix, tmp).returncode == 0
    fixed = cli("validate", "--qrels", tmp / "qrels.jsonl", "--run", "fixed.trec", cwd=tmp)
    assert "against" not in fixed.stderr and "disagrees" not in fixed.stderr
    assert " 1 -0.086000 mine" in (tmp / "fixed.trec").read_text().splitlines()[0]
    scored = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "fixed.trec", cwd=tmp)
    good = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "good.trec", cwd=tmp)
    assert metrics_of(scored) == metrics_of(good)


def test_a_right_run_with_ties_and_odd_ranks_is_not_called_swapped(made):
    tmp, run, _ = made
    write_trec(tmp / "ties.trec", run, lambda q, s, r, v: f"{q} Q0 {s} {r % 3} {round(v)} mine")
    result = cli("validate", "--qrels", tmp / "qrels.jsonl", "--run", "ties.trec", cwd=tmp)
    assert result.returncode == 0 and "swapped" not in result.stderr
    assert "the rank column disagrees" in result.stderr
    scored = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "good.trec", cwd=tmp)
    assert scored.stderr == ""


def test_ranks_given_as_scores_in_a_table_and_a_dict(made):
    """A CSV whose score column holds ranks; the library's dict too."""
    import skillret

    tmp, run, qrels = made
    with open(tmp / "ranks.csv", "w") as fh:
        fh.write("query_id,skill_id,score,rank\n")
        for query, ranking in run.items():
            for rank, (skill, score) in enumerate(sorted(ranking.items(),
                                                         key=lambda kv: -kv[1]), 1):
                fh.write(f"{query},{skill},{rank},{score}\n")
    result = cli("validate", "--qrels", tmp / "qrels.jsonl", "--run", "ranks.csv", cwd=tmp)
    assert "ranks.csv:2: the score and rank columns look swapped" in result.stderr
    assert "--columns score=NAME,rank=NAME" in result.stderr
    fixed = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "ranks.csv",
                "--columns", "score=rank,rank=score", cwd=tmp)
    good = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "good.trec", cwd=tmp)
    assert fixed.stderr == "" and metrics_of(fixed) == metrics_of(good)

    as_ranks = {q: {s: r for r, s in enumerate(sorted(d, key=lambda s: -d[s]), 1)}
                for q, d in run.items()}
    scores = skillret.score(qrels, as_ranks)
    assert len(scores.warnings) == 1 and "the scores look like ranks" in scores.warnings[0]
    assert skillret.score(qrels, run).warnings == []


# ------------------------------------------------------------------ ids swapped
def test_query_and_skill_ids_swapped_in_a_trec_run(made):
    tmp, run, _ = made
    write_trec(tmp / "ids.trec", run, lambda q, s, r, v: f"{s} Q0 {q} {r} {v} mine")
    result = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "ids.trec", cwd=tmp)
    assert result.returncode == 2
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "query ids are skill ids of the qrels" in message
    assert "the query and skill id columns look swapped" in message
    fix = re.search(r"e\.g\. (awk .*? > fixed\.trec)", message).group(1)
    assert follow(fix, tmp).returncode == 0
    fixed = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "fixed.trec", cwd=tmp)
    good = cli("score", "--qrels", tmp / "qrels.jsonl", "--run", "good.trec", cwd=tmp)
    assert fixed.returncode == 0 and metrics_of(fixed) == metrics_of(good)


# ------------------------------------------------------------------ qrels and run swapped
@pytest.mark.parametrize("run_file", ["results.json", "good.trec", "run.tsv"])
@pytest.mark.parametrize("command", ["score", "validate"])
def test_qrels_and_run_given_the_other_way_round(made, run_file, command):
    tmp, run, _ = made
    (tmp / "results.json").write_text(json.dumps({"metrics": {}, "retrieval": {"test": run}}))
    with open(tmp / "run.tsv", "w") as fh:
        fh.write("query_id\tskill_id\tscore\n")
        for query, ranking in run.items():
            fh.writelines(f"{query}\t{s}\t{v}\n" for s, v in ranking.items())
    result = cli(command, "--qrels", run_file, "--run", "qrels.jsonl", cwd=tmp)
    assert result.returncode == 2
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert "were the qrels and the run given the other way round? give --qrels QRELS --run " \
           "RUN" in message
    again = cli(command, "--qrels", "qrels.jsonl", "--run", run_file, cwd=tmp)
    assert again.returncode == 0, again.stderr


def test_the_library_says_so_too(made):
    import skillret

    tmp, _, _ = made
    with pytest.raises(skillret.InputError, match="other way round"):
        skillret.evaluate(tmp / "good.trec", tmp / "qrels.jsonl")


# ------------------------------------------------------------------ every hint works
def name_overlap(tmp: Path) -> Path:
    """The README's own example run, written by the example retriever."""
    out = tmp / "results" / "name-overlap.tsv"
    subprocess.run([sys.executable, str(ROOT / "retrievers" / "name_overlap.py"), "--skills",
                    str(ROOT / "data/sample/skills/test.jsonl"), "--queries",
                    str(ROOT / "data/sample/queries/test.jsonl"), "--output", str(out)],
                   check=True, capture_output=True)
    return out


@pytest.fixture
def sample(tmp_path):
    """The README's situation: the sample qrels, the name-overlap TSV, a second run (JSON)."""
    name_overlap(tmp_path)
    (tmp_path / "qrels.jsonl").write_text(
        (ROOT / "data/sample/qrels/test.jsonl").read_text())
    rows = [line.split("\t") for line in
            (tmp_path / "results/name-overlap.tsv").read_text().splitlines()[1:]]
    other: dict = {}
    for query, skill, score in rows:
        other.setdefault(query, {})[skill] = round(float(score) ** 2 + len(skill) * 1e-3, 6)
    (tmp_path / "other.json").write_text(json.dumps(other))
    return tmp_path


def hinted_columns(message: str) -> str:
    """The --columns (or --qrels-columns) value a message asks for, NAMEs filled in with the
    file's columns in the order listed (the example's columns come in role order)."""
    spec = re.search(r"pass --(?:qrels-)?columns (\S+?)(?: right after|\)|$)", message).group(1)
    listed = re.search(r"\(columns: ([^)]*)\)", message).group(1).split(", ")
    given = dict(part.split("=") for part in spec.split(","))
    free = [c for c in listed if c not in given.values()]
    return ",".join(f"{role}={free.pop(0) if name == 'NAME' else name}"
                    for role, name in given.items())


COMMANDS = {
    "score": ["score", "--qrels", "qrels.jsonl"],
    "validate": ["validate", "--qrels", "qrels.jsonl"],
    "fuse": ["fuse", "--method", "rrf", "-o", "fused.trec", "--run", "other.json"],
    "compare": ["compare", "--qrels", "qrels.jsonl", "--permutations", "50", "--bootstrap",
                "0", "--run", "other.json"],
}


def put_after_run(argv: list[str], run: str, extra: list[str]) -> list[str]:
    """``extra`` right after ``--run run``, as a hint that says so asks."""
    i = argv.index(run)
    return argv[:i + 1] + extra + argv[i + 1:]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_columns_hint_of_every_command_works(sample, command):
    """``has no query column (... pass --columns query=NAME)``: the README's run in each
    command; following the hint (twice, when only part of it was followed) gets through."""
    run = "results/name-overlap.tsv"
    argv = COMMANDS[command] + ["--run", run]
    first = cli(*argv, cwd=sample)
    assert first.returncode == 2
    message = first.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "has no query, skill or score column (columns: request, skill_uuid, overlap)" \
        in message
    if command in ("fuse", "compare"):
        assert f"right after --run {run}" in message
    # a user who follows it partly is told the rest, what was given kept
    partly = cli(*put_after_run(argv, run, ["--columns", "query=request"]), cwd=sample)
    assert "has no skill or score column" in partly.stderr
    assert "--columns query=request,skill=NAME,score=NAME" in partly.stderr
    spec = hinted_columns(partly.stderr.strip())
    assert spec == "query=request,skill=skill_uuid,score=overlap"
    followed = cli(*put_after_run(argv, run, ["--columns", spec]), cwd=sample)
    assert followed.returncode == 0, followed.stderr


def test_the_qrels_columns_hint_works(sample):
    with open(sample / "judged.csv", "w") as fh:
        fh.write("topic_name,skill_uuid,grade_given\n")
        for line in (sample / "qrels.jsonl").read_text().splitlines():
            row = json.loads(line)
            fh.write(f"{row['query_id']},{row['skill_id']},{row['relevance']}\n")
    argv = ["score", "--qrels", "judged.csv", "--run", "other.json"]
    first = cli(*argv, cwd=sample)
    assert "has no query, skill or relevance column" in first.stderr
    spec = hinted_columns(first.stderr.strip())
    followed = cli(*argv, "--qrels-columns", spec, cwd=sample)
    assert followed.returncode == 0, followed.stderr


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_header_hint_works(sample, command):
    """A TSV written without its header row: the message says so and its command adds it."""
    rows = (sample / "results/name-overlap.tsv").read_text().splitlines()[1:]
    (sample / "bare.tsv").write_text("\n".join(rows) + "\n")
    argv = COMMANDS[command] + ["--run", "bare.tsv"]
    first = cli(*argv, cwd=sample)
    message = first.stderr.strip()
    assert first.returncode == 2 and len(message.splitlines()) == 1
    assert "bare.tsv: has no header row: its first line holds data, not column names" in message
    fix = re.search(r"e\.g\. (\(printf .*?\) > \S+)\)$", message).group(1)
    assert follow(fix, sample).returncode == 0
    followed = cli(*[a if a != "bare.tsv" else "with-header.tsv" for a in argv], cwd=sample)
    assert followed.returncode == 0, followed.stderr


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_split_hint_works(sample, command):
    """SkillRet results with two splits, neither 'test': ``choose one: pass --split NAME``."""
    other = json.loads((sample / "other.json").read_text())
    (sample / "results.json").write_text(json.dumps(
        {"metrics": {}, "retrieval": {"dev": {}, "eval": other}}))
    argv = COMMANDS[command] + ["--run", "results.json"]
    first = cli(*argv, cwd=sample)
    message = first.stderr.strip()
    assert "holds several splits (dev, eval)" in message
    if command in ("fuse", "compare"):
        assert "choose one: pass --split NAME right after --run results.json" in message
        followed = cli(*put_after_run(argv, "results.json", ["--split", "eval"]), cwd=sample)
    else:
        assert "choose one: pass --split NAME" in message
        followed = cli(*argv, "--split", "eval", cwd=sample)
    assert followed.returncode == 0, followed.stderr


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("limit, low, high", [
    ("--max-results-per-query", "5", "50"),
    ("--max-input-size", "2K", "1G"),
    ("--max-json-depth", "1", "8"),
])
def test_the_limit_hints_work(sample, command, limit, low, high):
    """Each limit's message names the option that raises it; fuse and compare have it too."""
    argv = COMMANDS[command] + ["--run", "other.json"]
    if command in ("fuse", "compare"):
        argv = COMMANDS[command] + ["--run", "results/name-overlap.tsv", "--columns",
                                    "query=request,skill=skill_uuid,score=overlap"]
    first = cli(*argv, limit, low, cwd=sample)
    assert first.returncode == 2
    assert f"raise the limit with {limit}" in first.stderr
    followed = cli(*argv, limit, high, cwd=sample)
    assert followed.returncode == 0, followed.stderr


@pytest.mark.parametrize("command", ["fuse", "compare"])
def test_the_run_names_hint_works(sample, command):
    (sample / "b").mkdir()
    (sample / "b" / "other.json").write_text((sample / "other.json").read_text())
    argv = COMMANDS[command] + ["--run", "b/other.json"]
    first = cli(*argv, cwd=sample)
    assert first.returncode == 2 and "--run NAME=PATH" in first.stderr
    followed = cli(*[a if a != "b/other.json" else "second=b/other.json" for a in argv],
                   cwd=sample)
    assert followed.returncode == 0, followed.stderr


def test_the_data_directory_hint_works(sample):
    (sample / "data" / "qrels").mkdir(parents=True)
    (sample / "data" / "qrels" / "eval.jsonl").write_text((sample / "qrels.jsonl").read_text())
    argv = ["score", "--qrels", "data", "--run", "other.json"]
    first = cli(*argv, cwd=sample)
    assert "point --qrels at the file, or pass --split" in first.stderr
    assert cli(*argv, "--split", "eval", cwd=sample).returncode == 0
    assert cli("score", "--qrels", "data/qrels/eval.jsonl", "--run", "other.json",
               cwd=sample).returncode == 0


def test_the_grouping_note_works(made):
    """A TREC run whose queries are not grouped is read whole; the note's sort streams it."""
    tmp, run, _ = made
    lines = (tmp / "good.trec").read_text().splitlines()
    (tmp / "mixed.trec").write_text("\n".join(lines[1::2] + lines[0::2]) + "\n")
    first = cli("score", "--qrels", "qrels.jsonl", "--run", "mixed.trec", cwd=tmp)
    assert first.returncode == 0 and "not grouped" not in first.stdout
    command = re.search(r"group it by query first: (sort .*)$", first.stderr.strip()).group(1)
    assert follow(command, tmp).returncode == 0
    followed = cli("score", "--qrels", "qrels.jsonl", "--run", "sorted.trec", cwd=tmp)
    assert followed.stderr == "" and metrics_of(followed) == metrics_of(first)


def test_the_pipeline_hint_names_the_params_key(sample):
    """In a stage, the hint is the params key to set; setting it gets the stage through."""
    import yaml

    from skillret.pipeline.project_stages import normalize_qrels

    params = {"runs": {"name-overlap": "results/name-overlap.tsv"},
              "run_options": {"name-overlap": {}}, "validate": {"strict": False},
              "eval": {"profiles": ["official"]}}
    (sample / "params.yaml").write_text(yaml.safe_dump(params))
    normalize_qrels(sample / "qrels.jsonl", sample / "outputs" / "qrels.tsv")
    stage = ("import runpy, sys; sys.argv = ['score.py', 'name-overlap']; "
             f"sys.path.insert(0, {str(ROOT)!r}); runpy.run_module('stages.score', "
             "run_name='__main__')")
    first = cli_server.run_code(stage, cwd=sample)
    assert first.returncode == 2
    message = first.stderr.strip()
    key = "set run_options.name-overlap.columns: query=NAME,skill=NAME,score=NAME in " \
          "params.yaml"
    assert key in message
    params["run_options"]["name-overlap"] = {"columns": hinted_columns(
        message.replace(" in params.yaml", "").replace(
            "set run_options.name-overlap.columns: ", "pass --columns "))}
    (sample / "params.yaml").write_text(yaml.safe_dump(params))
    followed = cli_server.run_code(stage, cwd=sample)
    assert followed.returncode == 0, followed.stderr


# ------------------------------------------------------------------ small inconsistencies
def test_p_values_are_printed_alike_in_every_table(sample):
    """The smallest randomization p (1/10001) and Holm's adjustment of it, in the terminal
    table, the Markdown report and the breakdown table: 4 decimals everywhere."""
    from skillret.render.compare import format_p

    assert [format_p(p) for p in (1 / 10001, 4 / 10001, 0.05, 1.0, 1e-30, 0.0, None)] == \
        ["0.0001", "0.0004", "0.0500", "1.0000", "<0.0001", "<0.0001", "-"]
    other = json.loads((sample / "other.json").read_text())
    (sample / "worse.json").write_text(json.dumps(
        {q: {s: -v for s, v in d.items()} for q, d in other.items()}))
    done = cli("compare", "--qrels", "qrels.jsonl", "--run", "other.json", "--run",
               "worse.json", "--metric", "NDCG@10", "--markdown", "report.md",
               "--breakdown", "n_relevant", cwd=sample)
    assert done.returncode == 0, done.stderr
    printed = done.stdout + (sample / "report.md").read_text()
    assert "e-0" not in printed
    assert re.search(r"\b0\.0001\b", printed)


def test_a_stored_non_finite_metric_is_reported(made):
    """A results file whose tool stored NaN (and Infinity) for a metric: the cross-check lists
    it among the differences, and the report stays strict JSON."""
    tmp, run, _ = made
    (tmp / "results.json").write_text(
        '{"metrics": {"test": {"NDCG@10": NaN, "MAP@10": Infinity, "Recall@5": 0.5}}, '
        '"retrieval": {"test": ' + json.dumps(run) + "}}")
    done = cli("validate", "--qrels", "qrels.jsonl", "--run", "results.json", "--report",
               "report.json", cwd=tmp)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp / "report.json").read_text(), parse_constant=pytest.fail)
    cross = report["cross_check"]
    assert cross["checked"] == 3 and cross["differ"] == 3
    assert cross["differences"]["NDCG@10"]["file"] == "NaN"
    assert cross["differences"]["MAP@10"]["file"] == "Infinity"
    assert "NDCG@10 NaN vs " in done.stderr and "MAP@10 Infinity vs " in done.stderr
    strict = cli("validate", "--strict", "--qrels", "qrels.jsonl", "--run", "results.json",
                 cwd=tmp)
    assert strict.returncode == 2 and "NDCG@10 NaN" in strict.stderr


# ------------------------------------------------------------------ the library takes json.load's
def loaded_forms(tmp: Path, run: dict, qrels: dict) -> tuple[list, list]:
    """(file, the object a user loads from it) for every run and qrels format read from a
    file: SkillRet's results JSON, plain JSON, JSON lines, CSV, Parquet."""
    import csv

    import pandas as pd
    import pyarrow.parquet as pq

    rows = [{"query_id": q, "skill_id": s, "score": v} for q, d in run.items()
            for s, v in d.items()]
    judged = [{"query_id": q, "skill_id": s, "relevance": g} for q, d in qrels.items()
              for s, g in d.items()]
    (tmp / "results.json").write_text(json.dumps(
        {"metrics": {"test": {"NDCG@10": 0.1}}, "retrieval": {"test": run}}))
    (tmp / "run.json").write_text(json.dumps(run))
    (tmp / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pd.DataFrame(rows).to_csv(tmp / "run.csv", index=False)
    pd.DataFrame(rows).to_parquet(tmp / "run.parquet", index=False)
    (tmp / "qrels.json").write_text(json.dumps(qrels))
    (tmp / "judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in judged))
    (tmp / "queries.jsonl").write_text("".join(
        json.dumps({"id": q, "query": "...", "labels": [{"id": s, "relevance": g}
                                                         for s, g in d.items()]}) + "\n"
        for q, d in qrels.items()))
    pd.DataFrame(judged).to_csv(tmp / "judged.csv", index=False)

    def lines(name):
        return [json.loads(line) for line in (tmp / name).read_text().splitlines()]

    with open(tmp / "run.csv", newline="") as fh:
        csv_rows = list(csv.DictReader(fh))
    runs = [("results.json", json.loads((tmp / "results.json").read_text())),
            ("run.json", json.loads((tmp / "run.json").read_text())),
            ("run.jsonl", lines("run.jsonl")),
            ("run.csv", csv_rows),
            ("run.csv", pd.read_csv(tmp / "run.csv")),
            ("run.parquet", pq.read_table(tmp / "run.parquet")),
            ("run.parquet", pd.read_parquet(tmp / "run.parquet"))]
    judgments = [("qrels.json", json.loads((tmp / "qrels.json").read_text())),
                 ("judged.jsonl", lines("judged.jsonl")),
                 ("queries.jsonl", lines("queries.jsonl")),
                 ("judged.csv", pd.read_csv(tmp / "judged.csv"))]
    return runs, judgments


def test_the_library_takes_every_format_as_loaded(made):
    """Each format the CLI reads from a file, given to the library as the object a user loads
    from it, scores exactly as the file does."""
    import skillret

    tmp, run, qrels = made
    runs, judgments = loaded_forms(tmp, run, qrels)
    for name, loaded in runs:
        for profile in ("official", "recommended"):
            by_file = skillret.evaluate(tmp / "qrels.jsonl", tmp / name, profile)
            assert skillret.evaluate(tmp / "qrels.jsonl", loaded, profile) == by_file, name
    expected = skillret.evaluate(tmp / "qrels.jsonl", tmp / "run.json", "recommended")
    for name, loaded in judgments:
        assert skillret.evaluate(tmp / name, tmp / "run.json", "recommended") == expected, name
        assert skillret.evaluate(loaded, tmp / "run.json", "recommended") == expected, name
    # the results dict is a run everywhere: validation cross-checks its metrics, fusion fuses
    report = skillret.validate(qrels, runs[0][1])
    assert report["cross_check"]["checked"] == 1
    fused = skillret.fuse({"a": runs[0][1], "b": runs[2][1]}, method="rrf")
    assert len(fused) == sum(len(d) for d in run.values())


def test_the_results_dict_as_qrels_says_which_is_which(made):
    import skillret

    tmp, run, qrels = made
    results = {"metrics": {}, "retrieval": {"test": run}}
    with pytest.raises(skillret.InputError, match="other way round"):
        skillret.evaluate(results, qrels)
    with pytest.raises(skillret.InputError, match="record 2 is str"):
        skillret.evaluate(qrels, [{"query_id": "q", "skill_id": "s", "score": 1}, "x"])


# ------------------------------------------------------------------ a gzip qrels bomb
@pytest.mark.slow
def test_a_gzip_qrels_of_repeated_lines_stays_small(tmp_path):
    """1 MB of gzip repeating one judgment line to 512 MiB (60M lines): it used to take 11 GB
    (4 GiB of it: past 3 GiB and killed); exact repeats are dropped as the file is read, so the
    peak stays far under 1.5 GiB, the address space is capped anyway, and the repeats are
    counted as the duplicates they are."""
    import gzip

    line = b"q1 0 A 1\n"
    member = gzip.compress(line * ((64 << 20) // len(line)), compresslevel=9)
    with open(tmp_path / "qrels.txt.gz", "wb") as out:
        out.write(gzip.compress(b"q2 0 B 2\n"))
        for _ in range(8):
            out.write(member)
    assert (tmp_path / "qrels.txt.gz").stat().st_size < 2 << 20
    (tmp_path / "run.trec").write_text("q1 Q0 A 1 5.0 r\nq2 Q0 C 1 4.0 r\n")
    measure = ("import resource, subprocess, sys; "
               "done = subprocess.run(sys.argv[1:]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
               "sys.exit(done.returncode)")
    command = [sys.executable, "-c", measure, "bash", "-c",
               f"ulimit -v 3000000 && exec {shlex.quote(sys.executable)} -m skillret.cli "
               "validate --qrels qrels.txt.gz --run run.trec --report report.json"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    peak_kib = int(done.stdout.strip().splitlines()[-1])
    assert peak_kib < 1.5 * (1 << 20), f"peak RSS {peak_kib} KiB"
    report = json.loads((tmp_path / "report.json").read_text())
    repeats = 8 * ((64 << 20) // len(line)) - 1
    assert report["qrels_duplicates_dropped"] == repeats
    assert report["queries"]["in_qrels"] == 2


def test_qrels_read_in_compacted_parts_are_the_same(tmp_path, monkeypatch):
    """Dropping repeats part by part gives the judgments, the count of duplicates and the
    refusal of a conflicting grade that one pass gives."""
    import random

    from skillret.errors import InputError
    from skillret.io import text

    rng = random.Random(3)
    lines = [f"q{rng.randrange(30)} 0 s{rng.randrange(40)} 1\n" for _ in range(3000)]
    (tmp_path / "q.txt").write_text("".join(lines))
    whole = text.read_qrels(tmp_path / "q.txt")
    monkeypatch.setattr(text, "COMPACT_ROWS", 50)
    parts = text.read_qrels(tmp_path / "q.txt", block_size=512)
    assert parts.duplicates == whole.duplicates > 0
    assert parts.query_id.equals(whole.query_id) and parts.skill_id.equals(whole.skill_id)
    assert (parts.relevance == whole.relevance).all()
    (tmp_path / "c.txt").write_text("".join(lines) + "q0 0 s0 1\n" * 50 + "q0 0 s0 2\n")
    with pytest.raises(InputError, match=r"c\.txt:3051: query 'q0' judges skill 's0' twice "
                                         r"with different grades"):
        text.read_qrels(tmp_path / "c.txt", block_size=512)
