"""Validation through the real command line: errors stop with one line, warnings are counted.

Every error: exit status 2, one line on stderr naming the file (and the line, for line-oriented
text) and the reason, no traceback, neither --report nor --normalized written, no temporary file
left. Every warning: counted in the report, printed, and an error under --strict.

The command runs in a subprocess, as a user runs it; the many small cases run concurrently so
that the file stays fast.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import cli_server
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skillret
from skillret.errors import ValidationFailed
from skillret.validation.checks import WRONG_SPLIT_HINT

QRELS = "q1 0 A 1\nq1 0 B 2\nq2 0 C 1\n"
RUN = "q1 Q0 A 1 3.0 r\nq1 Q0 B 2 2.0 r\nq1 Q0 X 3 1.0 r\nq2 Q0 C 1 1.0 r\n"


def cli(*args, cwd=None):
    """``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)."""
    return cli_server.run(*args, cwd=cwd)


def fresh_cli(*args, cwd=None):
    """The same in a fresh interpreter, as a user starts it."""
    return subprocess.run([sys.executable, "-m", "skillret.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


# Many invocations of the command, each in a fresh working directory, handed to a few worker
# processes: the same entry point as `skillret-eval` (``skillret.cli``) with its exit status,
# stdout and stderr, without paying the interpreter's start-up for every case. An exception that
# escapes ``main`` is reported as a traceback, exactly what the tests require never to happen.
_DRIVER = r"""
import contextlib, io, json, os, sys, traceback
from skillret.cli import main
out = []
for cwd, argv in json.load(sys.stdin):
    os.chdir(cwd)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
    out.append({"returncode": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()})
print(json.dumps(out))
"""


def batch_cli(jobs: list[tuple[Path, list[str]]]) -> list[SimpleNamespace]:
    """Run ``skillret-eval ARGV`` in CWD for every (cwd, argv): results in the same order."""
    workers = max(min(os.cpu_count() or 2, 4), 1)
    parts = [list(range(i, len(jobs), workers)) for i in range(workers)]
    procs = []
    for part in parts:
        proc = subprocess.Popen([sys.executable, "-c", _DRIVER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        payload = json.dumps([(str(jobs[i][0]), [str(a) for a in jobs[i][1]]) for i in part])
        procs.append((part, proc, payload))
    results: list = [None] * len(jobs)
    for part, proc, payload in procs:
        stdout, stderr = proc.communicate(payload)
        assert proc.returncode == 0, stderr
        for i, item in zip(part, json.loads(stdout)):
            results[i] = SimpleNamespace(**item)
    return results


def parquet_bytes(columns: dict) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue().to_pybytes()


@dataclass
class Case:
    """Files to write (name -> text or bytes; qrels.txt and run.trec by default), the command's
    --qrels and --run, more arguments, and what the one error line must say."""

    id: str
    where: str                     # "run.trec:3" or "run.json"
    reason: str
    files: dict = field(default_factory=dict)
    qrels: str = "qrels.txt"
    run: str = "run.trec"
    args: tuple = ()


def gz(text: str) -> bytes:
    return gzip.compress(text.encode(), mtime=0)


CSV_HEAD = "query_id,skill_id,score\n"
JL = '{{"query_id": "q1", "skill_id": "{}", "score": {}}}\n'

ERRORS = [
    # missing, unreadable, binary, empty
    Case("missing-run", "nope.trec", "no such file", run="nope.trec"),
    Case("missing-qrels", "nope.txt", "no such file", qrels="nope.txt"),
    Case("run-is-a-directory", "somedir", "is a directory, not a run file", run="somedir",
         files={"somedir/x": "x"}),
    Case("truncated-gzip", "run.trec.gz", "cannot be read", run="run.trec.gz",
         files={"run.trec.gz": gz(RUN * 50)[:40]}),
    Case("binary-run", "run.trec", "is a binary file, not text",
         files={"run.trec": b"q1 Q0 A 1 1.0 r\n\x00\x01\x02\x03"}),
    Case("binary-qrels", "qrels.txt", "is a binary file, not text",
         files={"qrels.txt": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"}),
    Case("not-utf8", "run.trec:2", "is not UTF-8 text",
         files={"run.trec": b"q1 Q0 A 1 1.0 r\nq1 Q0 \xe9t\xe9 2 0.5 r\n"}),
    Case("parquet-garbage", "run.parquet", "is not a readable Parquet file", run="run.parquet",
         files={"run.parquet": b"PAR1 not really parquet"}),
    Case("empty-run", "run.trec", "file is empty", files={"run.trec": ""}),
    Case("empty-qrels", "qrels.txt", "file is empty", files={"qrels.txt": ""}),
    Case("blank-run", "run.trec", "file is empty (only whitespace)",
         files={"run.trec": "  \n\n\t\n"}),
    Case("empty-gzip", "run.trec.gz", "file is empty", run="run.trec.gz",
         files={"run.trec.gz": gz("")}),
    Case("comments-only-run", "run.trec", "holds no results (only blank or comment lines)",
         files={"run.trec": "# nothing\n\n# here\n"}),
    Case("comments-only-qrels", "qrels.txt", "holds no judgments",
         files={"qrels.txt": "# nothing\n"}),
    # wrong column count
    Case("trec-run-5-fields", "run.trec:3", "expected 6 fields: qid Q0 skill_id rank score tag, "
         "found 5 fields", files={"run.trec": RUN.replace("X 3 1.0 r", "X 3 1.0")}),
    Case("trec-run-5-fields-general-path", "run.trec:5", "expected 6 fields",
         files={"run.trec": "# header\n\n" + RUN.replace("X 3 1.0 r", "X  1.0 r")}),
    Case("trec-run-one-field-gz", "run.trec.gz:5", "found 1 field", run="run.trec.gz",
         files={"run.trec.gz": gz(RUN + "oops\n")}),
    Case("trec-qrels-5-fields", "qrels.txt:2", "expected 4 fields: qid iter skill_id grade, "
         "found 5 fields", files={"qrels.txt": "q1 0 A 1\nq1 0 B 2 x\n"}),
    Case("trec-qrels-3-fields", "qrels.txt:3", "found 3 fields",
         files={"qrels.txt": "q1 0 A 1\n\nq1 0 B\n"}),
    Case("csv-row-4-fields", "run.csv:3", "wrong column count: expected 3, found 4", run="run.csv",
         files={"run.csv": CSV_HEAD + "q1,A,1\nq1,B,1,2\n"}),
    Case("tsv-qrels-2-fields", "qrels.tsv:3", "wrong column count: expected 3, found 2",
         qrels="qrels.tsv",
         files={"qrels.tsv": "query_id\tskill_id\trelevance\nq1\tA\t1\nq1\tB\n"}),
    # scores that are not finite numbers
    Case("trec-nan", "run.trec:2", "score 'nan' is not a finite number",
         files={"run.trec": RUN.replace("B 2 2.0", "B 2 nan")}),
    Case("trec-infinity-general-path", "run.trec:4", "score 'Infinity' is not a finite number",
         files={"run.trec": "#\n" + RUN.replace("X 3 1.0", "X 3 Infinity")}),
    Case("trec-minus-inf-gz", "run.trec.gz:4", "score '-inf' is not a finite number",
         run="run.trec.gz", files={"run.trec.gz": gz(RUN.replace("C 1 1.0", "C 1 -inf"))}),
    Case("trec-text-score", "run.trec:1", "score 'high' is not a number",
         files={"run.trec": RUN.replace("A 1 3.0", "A 1 high")}),
    Case("csv-nan", "run.csv:3", "score 'nan' is not a finite number", run="run.csv",
         files={"run.csv": CSV_HEAD + "q1,A,1\nq1,B,nan\n"}),
    Case("csv-text-score", "run.csv:2", "score 'abc' is not a number", run="run.csv",
         files={"run.csv": CSV_HEAD + "q1,A,abc\nq1,B,1\n"}),
    Case("csv-decimal-comma", "run.csv:3", "score '2,5' is not a number", run="run.csv",
         files={"run.csv": CSV_HEAD + 'q1,A,1\nq1,B,"2,5"\n'}),
    Case("jsonl-nan", "run.jsonl:2", "score 'nan' is not a finite number", run="run.jsonl",
         files={"run.jsonl": JL.format("A", 1) + JL.format("B", "NaN")}),
    Case("json-nan", "run.json", "score 'nan' of skill 'B' for query 'q1' is not a finite number",
         run="run.json", files={"run.json": '{"q1": {"A": 1.0, "B": NaN}}'}),
    Case("results-json-infinity", "results.json", "score 'inf' of skill 'A'", run="results.json",
         files={"results.json": '{"metrics": {"test": {}}, "retrieval": {"test": '
                                '{"q1": {"A": Infinity}}}}'}),
    Case("json-text-score", "run.json", "run holds a value that is not a number",
         run="run.json", files={"run.json": '{"q1": {"A": "high"}}'}),
    Case("parquet-inf", "run.parquet", "score 'inf' is not a finite number", run="run.parquet",
         files={"run.parquet": parquet_bytes({"query_id": ["q1", "q1"], "skill_id": ["A", "B"],
                                              "score": [1.0, float("inf")]})}),
    # the same (query, skill) twice in a run
    Case("trec-duplicate", "run.trec:3", "query 'q1' lists skill 'A' twice (first at line 1)",
         files={"run.trec": RUN.replace("X 3", "A 3")}),
    Case("trec-duplicate-not-contiguous", "run.trec:5",
         "query 'q1' lists skill 'B' twice (first at line 2)",
         files={"run.trec": RUN + "q1 Q0 B 4 0.5 r\n"}),
    Case("csv-duplicate", "run.csv:4", "query 'q1' lists skill 'A' twice (first at line 2)",
         run="run.csv", files={"run.csv": CSV_HEAD + "q1,A,1\nq1,B,2\nq1,A,0.5\n"}),
    Case("parquet-duplicate", "run.parquet", "query 'q1' lists skill 'A' twice",
         run="run.parquet",
         files={"run.parquet": parquet_bytes({"query_id": ["q1", "q1"], "skill_id": ["A", "A"],
                                              "score": [1.0, 2.0]})}),
    Case("json-duplicate", "run.json", "'q1' lists 'A' twice", run="run.json",
         files={"run.json": '{"q1": {"A": 1.0, "B": 0.5, "A": 2.0}}'}),
    Case("results-json-query-twice", "results.json", "'test' lists 'q1' twice",
         run="results.json", files={"results.json": '{"metrics": {}, "retrieval": {"test": '
                                                    '{"q1": {"A": 1}, "q1": {"B": 1}}}}'}),
    # the same pair judged with different grades
    Case("trec-qrels-conflict", "qrels.txt:3",
         "query 'q1' judges skill 'A' twice with different grades (first at line 1)",
         files={"qrels.txt": "q1 0 A 1\nq1 0 B 2\nq1 0 A 2\n"}),
    Case("jsonl-qrels-conflict", "qrels.jsonl:3", "judges skill 'A' twice with different grades",
         qrels="qrels.jsonl",
         files={"qrels.jsonl": '{"query_id": "q1", "skill_id": "A", "relevance": 1}\n'
                               '{"query_id": "q1", "skill_id": "B", "relevance": 1}\n'
                               '{"query_id": "q1", "skill_id": "A", "relevance": 0}\n'}),
    Case("queries-labels-conflict", "queries.jsonl:2", "judges skill 'A' twice",
         qrels="queries.jsonl",
         files={"queries.jsonl": '{"id": "q2", "labels": [{"id": "C", "relevance": 1}]}\n'
                                 '{"id": "q1", "labels": "[{\\"id\\": \\"A\\", \\"relevance\\": '
                                 '1}, {\\"id\\": \\"A\\", \\"relevance\\": 2}]"}\n'}),
    # fractional grades
    Case("trec-fractional-grade", "qrels.txt:2", "grade 1.5 is not an integer",
         files={"qrels.txt": "q1 0 A 1\nq1 0 B 1.5\n"}),
    Case("csv-fractional-grade", "qrels.csv:3", "grade 0.5 is not an integer", qrels="qrels.csv",
         files={"qrels.csv": "query_id,skill_id,relevance\nq1,A,1\nq1,B,0.5\n"}),
    Case("jsonl-fractional-grade", "qrels.jsonl:1", "grade 2.5 is not an integer",
         qrels="qrels.jsonl",
         files={"qrels.jsonl": '{"query_id": "q1", "skill_id": "A", "relevance": 2.5}\n'}),
    Case("one-line-queries-fractional", "queries.jsonl:1", "grade 1.5 is not an integer",
         qrels="queries.jsonl",
         files={"queries.jsonl": '{"id": "q1", "labels": [{"id": "A", "relevance": 1.5}]}\n'}),
    Case("json-fractional-grade", "qrels.json", "grade 0.25 is not an integer",
         qrels="qrels.json", files={"qrels.json": '{"q1": {"A": 1, "B": 0.25}}'}),
    # malformed JSON, JSON of the wrong shape
    Case("json-malformed", "run.json:2", "malformed JSON", run="run.json",
         files={"run.json": '{"q1": {"A": 1.0,\n "B": }}'}),
    Case("jsonl-malformed", "run.jsonl:2", "malformed JSON", run="run.jsonl",
         files={"run.jsonl": JL.format("A", 1) + '{"query_id": "q1", "skill_id": "B", "score"\n'}),
    Case("queries-malformed", "queries.jsonl:2", "malformed JSON", qrels="queries.jsonl",
         files={"queries.jsonl": '{"id": "q1", "labels": [{"id": "A", "relevance": 1}]}\n'
                                 '{"id": "q2", "labels": [}\n'}),
    Case("qrels-json-malformed", "qrels.json:1", "malformed JSON", qrels="qrels.json",
         files={"qrels.json": '{"q1": {"A": 1}'}),
    Case("json-run-is-a-list", "run.json", "JSON of the wrong shape", run="run.json",
         files={"run.json": "[1, 2, 3]"}),
    Case("json-ranking-is-a-list", "run.json", "run of query 'q1' must be a mapping",
         run="run.json", files={"run.json": '{"q1": ["A", "B"]}'}),
    Case("results-json-retrieval-not-splits", "results.json", "'retrieval' must map split names",
         run="results.json", args=("--format", "skillret-json"),
         files={"results.json": '{"metrics": {}, "retrieval": []}'}),
    Case("qrels-json-is-a-list", "qrels.json", "JSON of the wrong shape", qrels="qrels.json",
         files={"qrels.json": "[1, 2]"}),
    Case("jsonl-line-not-an-object", "run.jsonl:2", "each line must be a JSON object",
         run="run.jsonl", files={"run.jsonl": JL.format("A", 1) + "[1, 2]\n"}),
    Case("jsonl-field-changes-type", "run.jsonl:2",
         "field 'score' is a string here but a number on line 1", run="run.jsonl",
         files={"run.jsonl": JL.format("A", 1) + JL.format("B", '"high"')}),
    Case("queries-labels-not-a-list", "queries.jsonl:1", "'labels' must be a list",
         qrels="queries.jsonl", files={"queries.jsonl": '{"id": "q1", "labels": 5}\n'}),
    Case("queries-labels-bad-string", "queries.jsonl:1", "'labels' is a string but not JSON",
         qrels="queries.jsonl", files={"queries.jsonl": '{"id": "q1", "labels": "[{"}\n'}),
    Case("results-json-no-such-split", "results.json", "has no split 'dev'", run="results.json",
         args=("--split", "dev"),
         files={"results.json": '{"metrics": {}, "retrieval": {"test": {"q1": {"A": 1}}}}'}),
    # no query in common
    Case("no-common-query", "run.trec", "no query in common with the qrels (1 run queries, "
         "e.g. 'x9'; 2 judged, e.g. 'q1') (wrong split or qrels version?",
         files={"run.trec": "x9 Q0 A 1 1.0 r\n"}),
    Case("no-common-query-json", "run.json", "no query in common with the qrels",
         run="run.json", files={"run.json": '{"Q1": {"A": 1.0}}'}),
]


def materialize(case: Case, root: Path) -> Path:
    d = root / case.id
    d.mkdir(parents=True)
    files = {"qrels.txt": QRELS, "run.trec": RUN, **case.files}
    for name, content in files.items():
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode("utf-8")
        path.write_bytes(content)
    return d


def validate_argv(qrels: str, run: str, *args) -> list[str]:
    return ["validate", "--qrels", qrels, "--run", run, "--report", "report.json",
            "--normalized", "run.parquet.out", *args]


def validate_cli(d: Path, qrels: str, run: str, *args):
    return cli(*validate_argv(qrels, run, *args), cwd=d)


@pytest.fixture(scope="module")
def error_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("errors")
    dirs = {case.id: materialize(case, root) for case in ERRORS}
    results = batch_cli([(dirs[c.id], validate_argv(c.qrels, c.run, *c.args)) for c in ERRORS])
    return {c.id: (dirs[c.id], r) for c, r in zip(ERRORS, results)}


def assert_clean_failure(d: Path, result) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    assert not (d / "report.json").exists()
    assert not (d / "run.parquet.out").exists()
    assert not list(d.glob(".*.tmp")), list(d.glob(".*"))


@pytest.mark.parametrize("case", ERRORS, ids=[c.id for c in ERRORS])
def test_error_one_line_exit_2_nothing_written(error_runs, case):
    d, result = error_runs[case.id]
    assert_clean_failure(d, result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"skillret-eval: error: {case.where}: "), lines[0]
    assert case.reason in lines[0], lines[0]
    assert result.stdout == ""


@pytest.mark.parametrize("case_id", ["trec-nan", "not-utf8", "csv-duplicate", "missing-qrels",
                                     "no-common-query"])
def test_errors_in_a_process_of_their_own(error_runs, case_id, tmp_path):
    """The batched runs above say what `skillret-eval` says when it runs alone."""
    case = next(c for c in ERRORS if c.id == case_id)
    d = materialize(case, tmp_path)
    alone = fresh_cli(*validate_argv(case.qrels, case.run, *case.args), cwd=d)
    batched = error_runs[case_id][1]
    assert (alone.returncode, alone.stdout, alone.stderr) == (
        batched.returncode, batched.stdout, batched.stderr)
    assert_clean_failure(d, alone)


def test_unreadable_file_message(tmp_path, monkeypatch):
    """The permission check itself, for machines (CI runs as root) where chmod 0 cannot make a
    file unreadable: os.access is told the truth a non-root user would see."""
    from skillret.io import sniff
    run = tmp_path / "run.trec"
    run.write_text(RUN)
    real = os.access
    monkeypatch.setattr(sniff.os, "access",
                        lambda path, mode: False if str(path) == str(run) else real(path, mode))
    with pytest.raises(skillret.InputError, match="run.trec: permission denied"):
        sniff.check_file(run)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root reads files whatever their permissions; "
                           "test_unreadable_file_message covers the check")
def test_unreadable_file(tmp_path):
    d = materialize(Case("unreadable", "", ""), tmp_path)
    (d / "run.trec").chmod(0)
    try:
        result = validate_cli(d, "qrels.txt", "run.trec")
    finally:
        (d / "run.trec").chmod(0o644)
    assert_clean_failure(d, result)
    assert "skillret-eval: error: run.trec: permission denied" in result.stderr


def test_score_command_stops_the_same_way(tmp_path):
    """The score command shares the readers: the same line, nothing written."""
    d = materialize(Case("x", "", "", files={"run.trec": RUN.replace("B 2 2.0", "B 2 nan")}),
                    tmp_path)
    result = cli("score", "--qrels", "qrels.txt", "--run", "run.trec", "-o", "m.json",
                 "--per-query", "pq.tsv", cwd=d)
    assert result.returncode == 2
    assert result.stderr.strip() == ("skillret-eval: error: run.trec:2: score 'nan' is not a "
                                     "finite number (every result needs a finite numeric score)")
    assert not (d / "m.json").exists() and not (d / "pq.tsv").exists()
    assert not list(d.glob(".*.tmp"))


def test_integral_float_grades_are_fine(tmp_path):
    qrels = {"q1": {"A": 1, "B": 2}, "q2": {"C": 1}}
    texts = {
        "qrels.txt": "q1 0 A 1.0\nq1 0 B 2.00\nq2 0 C 1e0\n",
        "qrels.csv": "query_id,skill_id,relevance\nq1,A,1.0\nq1,B,2.0\nq2,C,1\n",
        "qrels.jsonl": "".join(json.dumps({"query_id": q, "skill_id": s, "relevance": float(g)})
                               + "\n" for q, d in qrels.items() for s, g in d.items()),
        "queries.jsonl": '{"id": "q1", "labels": [{"id": "A", "relevance": 1.0}, '
                         '{"id": "B", "relevance": 2.0}]}\n'
                         '{"id": "q2", "labels": [{"id": "C", "relevance": 1.0}]}\n',
        "qrels.json": '{"q1": {"A": 1.0, "B": 2.0}, "q2": {"C": 1.0}}',
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
        assert skillret.read_qrels(tmp_path / name).to_dict() == qrels, name


# ---------------------------------------------------------------------- warnings
CLEAN_QRELS = "q1 0 A 1\nq1 0 B 2\nq2 0 C 1\n"


def ranking(query: str, skills: list[str], *, scores=None, ranks=None, tag="r") -> str:
    scores = scores or [float(len(skills) - i) for i in range(len(skills))]
    ranks = ranks or list(range(1, len(skills) + 1))
    return "".join(f"{query} Q0 {s} {r} {v!r} {tag}\n" for s, r, v in zip(skills, ranks, scores))


Q1 = ["A", "X01", "B"] + [f"X{i:02d}" for i in range(2, 14)]        # 15 results
Q2 = [f"Y{i:02d}" for i in range(1, 3)] + ["C"] + [f"Y{i:02d}" for i in range(3, 15)]
CLEAN_RUN = ranking("q1", Q1) + ranking("q2", Q2)


def as_json_run(text: str) -> dict:
    run: dict = {}
    for line in text.splitlines():
        q, _, s, _, v, _ = line.split()
        run.setdefault(q, {})[s] = float(v)
    return run


ZERO = {"in_run": 2, "in_qrels": 2, "in_both": 2, "missing": 0, "empty": 0, "unjudged": 0}


@dataclass
class Warned:
    """One warning: files, where the report counts it, the text of the warning."""

    id: str
    files: dict
    report: dict                   # dotted path -> expected value
    text: str
    run: str = "run.trec"
    qrels: str = "qrels.txt"


def swap_ranks(text: str, a: int, b: int) -> str:
    lines = text.splitlines(keepends=True)
    fa, fb = lines[a].split(), lines[b].split()
    fa[3], fb[3] = fb[3], fa[3]
    lines[a], lines[b] = " ".join(fa) + "\n", " ".join(fb) + "\n"
    return "".join(lines)


WARNINGS = [
    Warned("missing", {"qrels.txt": CLEAN_QRELS + "q3 0 D 1\nq4 0 E 0\n"},
           {"queries.missing": 2, "queries.in_qrels": 4, "queries.in_both": 2},
           "2 judged queries are missing from the run (e.g. 'q3')"),
    Warned("unjudged", {"run.trec": CLEAN_RUN + ranking("q9", Q2)},
           {"queries.unjudged": 1, "queries.in_run": 3, "queries.in_both": 2},
           "1 run query has no judgments (e.g. 'q9') and is ignored"),
    Warned("empty-json", {"run.json": json.dumps({**as_json_run(CLEAN_RUN), "q2": {}})},
           {"queries.empty": 1, "queries.in_run": 2, "results.min": 15, "results.shallow": 0},
           "1 query has an empty ranking (e.g. 'q2'); they score 0", run="run.json"),
    Warned("empty-csv", {"run.csv": "query_id,skill_id,score\n" + "".join(
        f"{q},{s},{v!r}\n" for q, d in as_json_run(CLEAN_RUN).items() if q == "q1"
        for s, v in d.items()) + "q2,,\n"},
           {"queries.empty": 1, "queries.in_run": 2, "results.rows": 15},
           "1 query has an empty ranking (e.g. 'q2')", run="run.csv"),
    Warned("shallow", {"run.trec": ranking("q1", Q1) + ranking("q2", Q2[:10])},
           {"results.shallow": 1, "results.min": 10, "results.max": 15, "results.median": 12.5,
            "results.rows": 25},
           "1 query retrieves fewer than 15 results, the largest cutoff"),
    Warned("ties", {"run.trec": ranking(  # in tie-rule order: skill id descending
        "q1", ["A", "X01", "B", "X04", "X03", "X02"] + [f"X{i:02d}" for i in range(5, 12)]
        + ["X13", "X12"], scores=[15, 14, 13, 12, 12, 12, 9, 8, 7, 6, 5, 4, 3, 2, 2])
        + ranking("q2", Q2)},
           {"ties.queries": 1, "ties.queries_within_depth": 1, "ties.pairs": 3,
            "rank_column.disagreeing_rows": 0},
           "run.trec:5: 1 query has tied scores (1 within the top 15); ties are broken by "
           "skill id, descending"),
    Warned("float32-ties-beyond-depth", {"run.trec": ranking("q1", Q1) + ranking(
        "q2", Q2 + ["Y16", "Y15"], scores=list(range(17, 2, -1)) + [0.1, 0.10000000000000002])},
           {"ties.queries": 1, "ties.queries_within_depth": 0, "ties.pairs": 1},
           "run.trec:32: 1 query has tied scores (0 within the top 15)"),
    Warned("rank-column", {"run.trec": swap_ranks(CLEAN_RUN, 20, 22)},
           {"rank_column.present": True, "rank_column.disagreeing_rows": 2,
            "rank_column.disagreeing_queries": 1},
           "run.trec:21: the rank column disagrees with the score order on 2 rows in 1 query"),
    Warned("extra-fields", {"run.trec": CLEAN_RUN.replace("X05 7 9.0 r", "X05 7 9.0 r x y")
                            .replace("Y01 1 15.0 r", "Y01 1 15.0 r z")},
           {"extra_fields": 2}, "2 lines have fields after the run tag; they are ignored"),
    Warned("duplicate-judgment", {"qrels.txt": CLEAN_QRELS + "q1 0 A 1\n"},
           {"qrels_duplicates_dropped": 1},
           "qrels.txt: 1 duplicate judgment (same query, skill and grade) dropped"),
]


def dig(report: dict, dotted: str):
    for key in dotted.split("."):
        report = report[key]
    return report


@pytest.fixture(scope="module")
def warning_runs(tmp_path_factory):
    """Each case validated twice, concurrently: as is, and under --strict."""
    root = tmp_path_factory.mktemp("warnings")
    jobs = {}
    for case in WARNINGS + [Warned("clean", {}, {}, "")]:
        for strict in (False, True):
            d = root / f"{case.id}-{'strict' if strict else 'lax'}"
            d.mkdir()
            for name, text in {"qrels.txt": CLEAN_QRELS, "run.trec": CLEAN_RUN,
                               **case.files}.items():
                (d / name).write_text(text)
            jobs[case.id, strict] = (d, validate_argv(case.qrels, case.run,
                                                      *(("--strict",) if strict else ())))
    results = batch_cli(list(jobs.values()))
    return {key: (job[0], result) for (key, job), result in zip(jobs.items(), results)}


def test_clean_run_has_no_warnings(warning_runs):
    for strict in (False, True):
        d, result = warning_runs["clean", strict]
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        report = json.loads((d / "report.json").read_text())
        assert report["status"] == "ok" and report["warnings"] == []
        assert report["queries"] == ZERO
        assert report["results"] == {"rows": 30, "min": 15, "median": 15.0, "max": 15,
                                     "depth": 15, "shallow": 0}
        assert report["ties"] == {"queries": 0, "queries_within_depth": 0, "pairs": 0}
        assert report["rank_column"] == {"present": True, "disagreeing_rows": 0,
                                         "disagreeing_queries": 0}
        assert report["extra_fields"] == 0 and report["qrels_duplicates_dropped"] == 0
        assert report["cross_check"] is None
        assert (d / "run.parquet.out").exists()
        assert "run.trec: ok: 2 queries in the run, 2 judged, 2 in both" in result.stdout


@pytest.mark.parametrize("case", WARNINGS, ids=[c.id for c in WARNINGS])
def test_warning_counted_printed_and_strict(warning_runs, case):
    d, result = warning_runs[case.id, False]
    assert result.returncode == 0, result.stderr
    report = json.loads((d / "report.json").read_text())
    assert report["status"] == "warnings"
    assert len(report["warnings"]) == 1, report["warnings"]
    assert case.text in report["warnings"][0]
    assert result.stderr.strip() == f"skillret-eval: warning: {report['warnings'][0]}"
    for key, value in case.report.items():
        assert dig(report, key) == value, key
    assert (d / "run.parquet.out").exists()
    # --strict: the same warning is an error; nothing written
    d, result = warning_runs[case.id, True]
    assert_clean_failure(d, result)
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"skillret-eval: warning: {report['warnings'][0]}"
    assert lines[-1].startswith("skillret-eval: error: ")
    assert "1 warning(s) under strict validation" in lines[-1]


def test_all_warnings_together(tmp_path):
    """Known counts when everything happens at once (the example in the module docstring of
    skillret.validation): queries missing, unjudged, shallow, tied, mis-ranked, extra fields."""
    q1 = ["A", "B", "C"] + [f"X{i:02d}" for i in range(4, 18)] + ["X18"]   # 18 results
    scores = [float(18 - i) for i in range(16)] + [1.0, 1.0]
    lines = ranking("q1", q1[:16], scores=scores[:16]).splitlines(keepends=True)
    lines += ["q1 Q0 X18 17 1.0 r\n", "q1 Q0 X17 18 1.0 r\n"]     # tie rule: X18 before X17
    lines[1], lines[2] = lines[1].replace(" 2 ", " 3 "), lines[2].replace(" 3 ", " 2 ")
    lines[0] = lines[0].rstrip("\n") + " extra\n"
    lines[4] = lines[4].rstrip("\n") + " more fields\n"
    lines += ["q2 Q0 H 1 0.1 r\n", "q2 Q0 G 2 0.10000000000000002 r\n", "q2 Q0 D 3 0.1 r\n",
              "q5 Q0 Z 1 2.0 r\n", "q5 Q0 Y 2 1.0 r\n"]
    (tmp_path / "run.trec").write_text("".join(lines))
    (tmp_path / "qrels.txt").write_text("q1 0 A 1\nq1 0 B 2\nq1 0 C 0\nq1 0 A 1\nq2 0 D 1\n"
                                        "q3 0 E 1\n")
    result = validate_cli(tmp_path, "qrels.txt", "run.trec")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["queries"] == {"in_run": 3, "in_qrels": 3, "in_both": 2, "missing": 1,
                                 "empty": 0, "unjudged": 1}
    assert report["results"] == {"rows": 23, "min": 2, "median": 3.0, "max": 18, "depth": 15,
                                 "shallow": 2}
    assert report["ties"] == {"queries": 2, "queries_within_depth": 1, "pairs": 3}
    assert report["rank_column"] == {"present": True, "disagreeing_rows": 2,
                                     "disagreeing_queries": 1}
    assert report["extra_fields"] == 2
    assert report["qrels_duplicates_dropped"] == 1
    assert len(report["warnings"]) == 7
    printed = [ln for ln in result.stderr.splitlines() if ln.startswith("skillret-eval: warning:")]
    assert printed == [f"skillret-eval: warning: {w}" for w in report["warnings"]]
    assert any(w.startswith("run.trec:18: 2 queries have tied scores") for w in report["warnings"])
    assert any(w.startswith("run.trec:2: the rank column disagrees") for w in report["warnings"])
    # a smaller depth changes what "shallow" and "within depth" count
    result = validate_cli(tmp_path, "qrels.txt", "run.trec", "--depth", "2")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["results"]["shallow"] == 0 and report["results"]["depth"] == 2
    assert report["ties"]["queries_within_depth"] == 1


def test_validate_api_strict_and_normalized(tmp_path):
    qrels = {"q1": {"A": 1}, "q2": {"B": 1}}
    run = {"q1": {"A": 1.0, "Z": 1.0}}
    out = tmp_path / "n.parquet"
    report = skillret.validate(qrels, run, depth=2, normalized=out)
    assert report["queries"]["missing"] == 1 and report["ties"]["pairs"] == 1
    assert out.exists()
    out.unlink()
    with pytest.raises(ValidationFailed) as info:
        skillret.validate(qrels, run, depth=2, strict=True, normalized=out)
    assert info.value.report["warnings"] == report["warnings"]
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(skillret.InputError, match="no query in common"):
        skillret.validate(qrels, {"x": {"A": 1.0}}, normalized=out)
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))


# ---------------------------------------------------------------------- cross-check
CROSS_QRELS = {"q1": {"A": 1, "B": 2, "C": 1}, "q2": {"D": 1}, "q3": {"E": 2, "F": 1}}
CROSS_RUN = {"q1": {"X": 3.0, "A": 2.5, "B": 2.0, "Y": 1.0},
             "q2": {"D": 1.0, "Z": 0.5},
             "q3": {"F": 0.9, "W": 0.8, "V": 0.7, "E": 0.1}}


def results_file(path: Path, metrics: dict, *, nested: bool = True) -> Path:
    doc = {"metrics": {"test": metrics} if nested else metrics,
           "retrieval": {"test": CROSS_RUN}}
    path.write_text(json.dumps(doc))
    return path


def qrels_file(path: Path, qrels: dict) -> Path:
    path.write_text("".join(f"{q} 0 {s} {g}\n" for q, d in qrels.items() for s, g in d.items()))
    return path


def test_cross_check_matching_metrics(tmp_path):
    metrics = {**skillret.trec_eval(CROSS_QRELS, CROSS_RUN), "num_queries": 3, "model": "bm25"}
    for nested in (True, False):
        run = results_file(tmp_path / f"results-{nested}.json", metrics, nested=nested)
        result = validate_cli(tmp_path, qrels_file(tmp_path / "qrels.txt", CROSS_QRELS), run,
                              "--strict", "--depth", "2")
        assert result.returncode == 0, result.stderr
        report = json.loads((tmp_path / "report.json").read_text())
        assert report["format"] in ("json", "skillret-json")
        assert report["cross_check"] == {"checked": 15, "differ": 0, "differences": {}}
        assert report["warnings"] == [] and report["status"] == "ok"


def test_cross_check_reports_every_metric_that_differs(tmp_path):
    """Metrics computed on another qrels version (q3 judged differently) do not reproduce."""
    other = {**CROSS_QRELS, "q3": {"W": 1}}
    carried = skillret.trec_eval(other, CROSS_RUN)
    mine = skillret.trec_eval(CROSS_QRELS, CROSS_RUN)
    differ = {k: {"file": carried[k], "recomputed": mine[k]} for k in mine
              if carried[k] != mine[k]}
    assert 3 < len(differ) < 15
    run = results_file(tmp_path / "results.json", carried)
    qrels = qrels_file(tmp_path / "qrels.txt", CROSS_QRELS)
    result = validate_cli(tmp_path, qrels, run, "--depth", "2")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["cross_check"] == {"checked": 15, "differ": len(differ), "differences": differ}
    assert len(report["warnings"]) == 1
    warning = report["warnings"][0]
    for name, v in differ.items():
        assert f"{name} {v['file']} vs {v['recomputed']}" in warning
    assert WRONG_SPLIT_HINT in warning and "different qrels version or split" in warning
    assert warning in result.stderr
    # under --strict the mismatch stops validation
    (tmp_path / "report.json").unlink()
    (tmp_path / "run.parquet.out").unlink()
    result = validate_cli(tmp_path, qrels, run, "--strict", "--depth", "2")
    assert_clean_failure(tmp_path, result)
    # the file's own numbers are reproduced on the qrels they came from
    result = validate_cli(tmp_path, qrels_file(tmp_path / "other.txt", other), run, "--strict",
                          "--depth", "2")
    assert result.returncode == 0, result.stderr
