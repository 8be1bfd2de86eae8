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

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "skillret.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


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
