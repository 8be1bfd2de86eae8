"""The command line, driven as a user drives it: a real process, real files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import cli_server
import pytest

QRELS = "q1 0 A 1\nq1 0 B 1\nq1 0 C 1\nq2 0 D 2\n"
RUN = ("q1 Q0 X 1 5.0 r\nq1 Q0 A 2 4.0 r\nq1 Q0 Y 3 3.0 r\nq1 Q0 C 4 2.0 r\nq1 Q0 Z 5 1.0 r\n"
       "q2 Q0 D 1 1.0 r\n")


#: ``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)
cli = cli_server.run


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return tmp_path


def test_score_writes_metrics_and_prints_a_table(files):
    out = files / "m.json"
    result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec",
                 "--profile", "official", "--profile", "mia5150", "-o", out,
                 "--per-query", files / "pq.tsv")
    assert result.returncode == 0, result.stderr
    metrics = json.loads(out.read_text())
    assert list(metrics) == ["official", "mia5150", "queries"]
    assert metrics["mia5150"]["MRR@5"] == 0.75          # (1/2 + 1) / 2
    assert metrics["queries"] == {"judged": 2, "in_run": 2, "in_both": 2, "missing": 0,
                                  "empty": 0, "unjudged": 0,
                                  "evaluated": {"official": 2, "mia5150": 2}}
    assert "NDCG" in result.stdout and "@15" in result.stdout
    rows = (files / "pq.tsv").read_text().splitlines()
    assert rows[0].startswith("query_id\tin_run\tretrieved\trelevant\tNDCG@5")
    assert len(rows) == 3


def test_outputs_get_the_usual_permissions(files):
    out = files / "m.json"
    old = os.umask(0o022)
    try:
        assert cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec", "-q",
                   "-o", out).returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_output_is_deterministic(files):
    a, b = files / "a.json", files / "b.json"
    for target in (a, b):
        assert cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec",
                   "-q", "-o", target).returncode == 0
    assert a.read_bytes() == b.read_bytes()


def test_profiles_from_params(files):
    (files / "params.yaml").write_text(
        "eval:\n  profiles: [deep]\n  define:\n"
        "    deep: {metrics: [NDCG@20, MRR@3], query_set: run-judged, rounding: 3}\n")
    out = files / "m.json"
    result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec",
                 "--params", files / "params.yaml", "-q", "-o", out)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["deep"] == {"NDCG@20": 0.749, "MRR@3": 0.75}
    listing = cli("profiles", "--params", files / "params.yaml")
    assert "deep (user-defined)" in listing.stdout and "official (built-in)" in listing.stdout
    assert "Completeness@K = 1 if" in listing.stdout


@pytest.mark.parametrize("content,message", [
    ("q1 Q0 A 1 nan r\n", "run.trec:1: score 'nan' is not a finite number"),
    ("q1 Q0 A 1 1.0 r\nq1 Q0 A 2 0.5 r\n", "run.trec:2: query 'q1' lists skill 'A' twice"),
    ("q1 Q0 A 1 1.0\n", "run.trec:1: expected 6 fields"),
    ("q1 Q0 A 1 high r\n", "run.trec:1: score 'high' is not a number"),
    ("", "run.trec: file is empty"),
    ("x9 Q0 A 1 1.0 r\n", "no query in common with the qrels"),
])
def test_bad_run_one_line_exit_2_no_output(files, content, message):
    (files / "run.trec").write_text(content)
    out = files / "m.json"
    result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec", "-o", out,
                 "--per-query", files / "pq.tsv")
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not out.exists() and not (files / "pq.tsv").exists()
    assert not list(files.glob(".*.tmp"))


def test_missing_file_and_unknown_profile(files):
    result = cli("score", "--qrels", files / "nope.txt", "--run", files / "run.trec")
    assert result.returncode == 2 and "nope.txt: no such file" in result.stderr
    result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec",
                 "--profile", "bogus")
    assert result.returncode == 2 and "unknown profile 'bogus'" in result.stderr


def test_scoring_a_run_stays_lean(files):
    """A scoring process never pays for pandas or DVC (pyarrow.compute, public API, is used:
    docs/benchmarks.md measures what it costs)."""
    code = ("import sys; from skillret import cli; "
            f"cli.main(['score', '--qrels', {str(files / 'qrels.txt')!r}, "
            f"'--run', {str(files / 'run.trec')!r}, '-q', '-o', {str(files / 'm.json')!r}]); "
            "print(sorted(m for m in ('pandas', 'dvc') if m in sys.modules))")
    result = cli_server.run_code(code)   # forked from a process that imported neither
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert (files / "m.json").exists()


#: Runs a command as ``skillret-eval`` does, then names the heavy modules it imported.
LEAN = ("import sys\nfrom skillret import cli\nstatus = cli.main(sys.argv[1:])\n"
        "print(sorted(m for m in ('pandas', 'dvc') if m in sys.modules), status)")


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    """The run and qrels of :data:`RUN` and :data:`QRELS` in every format a command reads."""
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path_factory.mktemp("formats")
    run = [line.split() for line in RUN.splitlines()]
    qrels = [line.split() for line in QRELS.splitlines()]
    (d / "run.trec").write_text(RUN)
    # a comment and a tab among spaces: the block is not regular, read the general way
    (d / "run_general.trec").write_text("# general\n" + RUN.replace(" Q0 ", "\tQ0 ", 2))
    (d / "run.trec.gz").write_bytes(gzip.compress(RUN.encode()))
    # A and X trade places: q1 gains, so that `queries` has a change to explain
    (d / "run_swapped.trec").write_text(
        RUN.replace(" X ", " _ ").replace(" A ", " X ").replace(" _ ", " A "))
    pq.write_table(pa.table({"query_id": [r[0] for r in run], "skill_id": [r[2] for r in run],
                             "score": [float(r[4]) for r in run]}), d / "run.parquet")
    nested: dict = {}
    for r in run:
        nested.setdefault(r[0], {})[r[2]] = float(r[4])
    (d / "run.json").write_text(json.dumps(nested))
    (d / "run.jsonl").write_text("".join(json.dumps({"query_id": r[0], "skill_id": r[2],
                                                     "score": float(r[4])}) + "\n" for r in run))
    (d / "run.csv").write_text("query_id,skill_id,score\n" + "".join(
        f"{r[0]},{r[2]},{r[4]}\n" for r in run))
    (d / "run.tsv").write_text("qid\tdocno\tsim\n" + "".join(
        f"{r[0]}\t{r[2]}\t{r[4]}\n" for r in run))
    (d / "qrels.txt").write_text(QRELS)
    (d / "qrels_general.txt").write_text("# general\n" + QRELS.replace(" 0 ", "\t0 ", 1))
    (d / "qrels.txt.gz").write_bytes(gzip.compress(QRELS.encode()))
    (d / "qrels.jsonl").write_text("".join(json.dumps({"query_id": q[0], "skill_id": q[2],
                                                       "relevance": int(q[3])}) + "\n"
                                           for q in qrels))
    (d / "qrels.csv").write_text("query_id,skill_id,relevance\n" + "".join(
        f"{q[0]},{q[2]},{q[3]}\n" for q in qrels))
    pq.write_table(pa.table({"query_id": [q[0] for q in qrels], "skill_id": [q[2] for q in qrels],
                             "relevance": [int(q[3]) for q in qrels]}), d / "qrels.parquet")
    judged: dict = {}
    for q in qrels:
        judged.setdefault(q[0], {})[q[2]] = int(q[3])
    (d / "qrels.json").write_text(json.dumps(judged))
    return d


@pytest.mark.parametrize("args", [
    *(["score", "--qrels", "qrels.txt", "--run", run, "-q", "-o", "m.json"]
      for run in ("run.trec", "run_general.trec", "run.trec.gz", "run.parquet", "run.json",
                  "run.jsonl", "run.csv", "run.tsv")),
    *(["score", "--qrels", qrels, "--run", "run.trec", "-q"]
      for qrels in ("qrels_general.txt", "qrels.txt.gz", "qrels.jsonl", "qrels.csv",
                    "qrels.parquet", "qrels.json")),
    ["score", "--qrels", "qrels.txt", "--run", "run.trec", "--per-query", "pq.tsv",
     "--breakdown", "n_required", "--profile", "official", "--profile", "recommended"],
    ["score", "--qrels", "qrels.txt", "--run", "run.csv", "-q", "--per-query", "pq.parquet"],
    *(["validate", "--qrels", "qrels.txt", "--run", run, "--report", "report.json",
       "--normalized", normalized]
      for run, normalized in (("run.trec", "n.parquet"), ("run_general.trec", "n.trec"),
                              ("run.parquet", "n.json"), ("run.json", "n.parquet"),
                              ("run.csv", "n.trec"))),
    *(["normalize-qrels", "--qrels", qrels, "-o", "q.tsv", "--stats", "stats.json"]
      for qrels in ("qrels.txt", "qrels_general.txt", "qrels.jsonl", "qrels.parquet")),
    ["profiles", "--json"],
    ["fuse", "--run", "a=run.trec", "--run", "b=run.parquet", "--method", "rrf", "-o", "f.trec"],
    ["fuse", "--run", "a=run.json", "--run", "b=run.csv", "--method", "combmnz", "-o",
     "f.parquet"],
    ["queries", "--qrels", "qrels.txt", "--run", "a=run.trec", "--run", "b=run_swapped.trec",
     "--format", "json", "-o", "q.json"],
], ids=lambda args: "-".join(a for a in args if not a.startswith("-"))[:60])
def test_commands_never_import_pandas(formats, args):
    """Scoring, validation, qrels normalization, fusion and queries, from every format:
    pyarrow probes for pandas (and imports it) on its first generic conversion; these convert
    through buffers (:mod:`skillret.columnar.arrow`) and never import it, nor DVC. Each command
    in a process of its own, forked from one that imported neither (tests/cli_server.py)."""
    result = cli_server.run_code(LEAN, *args, cwd=formats)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[] 0", result.stderr


def test_public_names_resolve_and_import_skillret_is_light():
    code = ("import sys, skillret; light = 'numpy' not in sys.modules; "
            "[getattr(skillret, n) for n in skillret.__all__]; print(light)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_help_does_not_import_heavy_modules():
    code = ("import sys; from skillret import cli; "
            "sys.argv=['skillret-eval','--help'];\n"
            "try:\n cli.main()\nexcept SystemExit: pass\n"
            "print(sorted(m for m in ('numpy','pyarrow','pandas','dvc') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_register_edits_params_in_place(tmp_path):
    """``register`` without git or DVC (tests/pipeline/test_pipeline.py then reproduces what it wrote):
    unique plain names, options, a second registration that changes nothing, comments kept."""
    import yaml

    root = tmp_path / "project"
    (root / "results" / "embed").mkdir(parents=True)
    (root / "results" / "other").mkdir()
    params = root / "params.yaml"
    params.write_text("# my settings\nruns:\n  bm25: runs/bm25.json  # the baseline\n"
                      "run_options:\n  bm25: {}\n")
    for path in ("results/embed/e5.json", "results/other/e5.json.gz"):
        (root / path).write_text("{}\n")
    (root / "results/mine.csv").write_text("q,s,v\nq-1,s-1,0.5\n")
    result = cli("register", "results/embed/e5.json", "results/other/e5.json.gz", cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["e5: results/embed/e5.json (registered)",
                                          "e5-2: results/other/e5.json.gz (registered)"]
    again = cli("register", "results/embed/e5.json", cwd=root)
    assert again.stdout == "e5: results/embed/e5.json (already registered)\n"
    result = cli("register", "results/mine.csv", "--name", "mine", "--format", "csv",
                 "--columns", "query=q,skill=s,score=v", cwd=root)
    assert result.returncode == 0, result.stderr
    text = params.read_text()
    assert text.startswith("# my settings\nruns:\n  bm25: runs/bm25.json  # the baseline\n")
    written = yaml.safe_load(text)
    assert written["runs"] == {"bm25": "runs/bm25.json", "e5": "results/embed/e5.json",
                               "e5-2": "results/other/e5.json.gz", "mine": "results/mine.csv"}
    assert written["run_options"] == {"bm25": {}, "e5": {}, "e5-2": {},
                                      "mine": {"format": "csv",
                                               "columns": "query=q,skill=s,score=v"}}
    bad = cli("register", "results/mine.csv", "--name", "../evil", cwd=root)
    assert bad.returncode == 2 and "run name '../evil' is not a plain name" in bad.stderr
    outside = cli("register", str(tmp_path / "nowhere.json"), cwd=root)
    assert outside.returncode == 2 and "nowhere.json: no such run file" in outside.stderr
    assert yaml.safe_load(params.read_text()) == written
