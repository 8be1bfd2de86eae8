"""The JSON readers under attack: every bad document is one line naming the file (and line),
exit status 2, nothing written; and property tests (hypothesis) that a JSON document either
reads back exactly or is refused with an InputError, never another exception.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cli_server
import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillret import limits
from skillret.errors import InputError
from skillret.io.readers import open_run, read_qrels
from skillret.io.documents import _too_deep

QRELS = "q1 0 A 1\nq1 0 B 1\nq2 0 D 2\n"
RUN = "q1 Q0 A 1 5.0 r\nq2 Q0 D 1 1.0 r\n"
DEEP = "[" * 100_000 + "]" * 100_000


def read_run(path):
    """A run file in memory, as a user reads one."""
    return open_run(path).read()


def cli(*args, cwd):
    """``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)."""
    return cli_server.run(*args, cwd=cwd)


def jsonl(*rows) -> str:
    return "".join(r if isinstance(r, str) else json.dumps(r) + "\n" for r in rows)


def late(bad: bytes) -> bytes:
    """20,000 good JSON lines, then a line with ``bad`` in an id."""
    good = jsonl(*({"query_id": f"q{i}", "skill_id": "A", "score": 1.0}
                   for i in range(20_000))).encode()
    return good + b'{"query_id": "q' + bad + b'", "skill_id": "A", "score": 1.0}\n'


# (id, file name, content, role, where the message points, reason)
CASES = [
    ("deep-run", "run.json", "{\"q1\": " + DEEP + "}", "run", "run.json:1",
     "JSON nested deeper than 64 levels"),
    ("deep-qrels", "qrels.json", DEEP, "qrels", "qrels.json:1",
     "JSON nested deeper than 64 levels"),
    ("deep-second-line", "run.json", '{"q1":\n' + DEEP + "}", "run", "run.json:2",
     "nested deeper"),
    ("grade-infinity-labels", "queries.jsonl",
     jsonl({"id": "q1", "labels": [{"id": "A", "relevance": 1}]},
           '{"id": "q2", "labels": [{"id": "D", "relevance": Infinity}]}\n'),
     "qrels", "queries.jsonl:2", "grade inf is not an integer"),
    ("grade-1e400-labels", "queries.jsonl",
     jsonl('{"id": "q1", "labels": [{"id": "A", "relevance": 1e400}]}\n'),
     "qrels", "queries.jsonl:1", "grade inf is not an integer"),
    ("grade-infinity-json", "qrels.json", '{"q1": {"A": Infinity}}', "qrels", "qrels.json",
     "grade inf is not an integer"),
    ("grade-1e400-json", "qrels.json", '{"q1": {"A": 1e400}}', "qrels", "qrels.json",
     "grade inf is not an integer"),
    ("grade-1e400-jsonl", "qrels.jsonl",
     jsonl({"query_id": "q1", "skill_id": "A", "relevance": 1},
           '{"query_id": "q2", "skill_id": "D", "relevance": 1e400}\n'),
     "qrels", "qrels.jsonl:2", "number too big"),
    ("late-bad-utf8-jsonl", "run.jsonl", late(b"\xff"), "run", "run.jsonl:20001",
     "is not UTF-8 text"),
    ("late-bad-utf8-queries", "queries.jsonl",
     jsonl(*({"id": f"q{i}", "skill_ids": ["A"]} for i in range(5000))).encode()
     + b'{"id": "q\xc3", "skill_ids": ["A"]}\n', "qrels", "queries.jsonl:5001",
     "is not UTF-8 text"),
    ("bad-utf8-json", "run.json", b'{"q1": {"A": 1.0},\n "q\xfe2": {"D": 1.0}}', "run",
     "run.json:2", "is not UTF-8 text"),
    ("bool-score-json", "run.json", '{"q1": {"A": true}}', "run", "run.json",
     "score of skill 'A' for query 'q1' is a boolean true"),
    ("bool-grade-json", "qrels.json", '{"q1": {"A": false}}', "qrels", "qrels.json",
     "grade of skill 'A' for query 'q1' is a boolean false"),
    ("string-grade-json", "qrels.json", '{"q1": {"A": "1"}}', "qrels", "qrels.json",
     "grade of skill 'A' for query 'q1' is a string \"1\""),
    ("null-score-json", "run.json", '{"q1": {"A": 1.0, "B": null}}', "run", "run.json",
     "score of skill 'B' for query 'q1' is null"),
    ("nan-score-json", "run.json", '{"q1": {"A": NaN}}', "run", "run.json",
     "is not a finite number"),
    ("bool-score-jsonl", "run.jsonl",
     jsonl({"query_id": "q1", "skill_id": "A", "score": True}), "run", "run.jsonl:1",
     "score true is a boolean, not a number"),
    ("string-score-jsonl", "run.jsonl",
     jsonl({"query_id": "q1", "skill_id": "A", "score": "0.5"}), "run", "run.jsonl:1",
     "score \"0.5\" is a string, not a number"),
    ("string-grade-jsonl", "qrels.jsonl",
     jsonl({"query_id": "q1", "skill_id": "A", "relevance": "1"}), "qrels", "qrels.jsonl:1",
     "grade \"1\" is a string, not a number"),
    ("bool-grade-jsonl", "qrels.jsonl",
     jsonl({"query_id": "q1", "skill_id": "A", "relevance": True}), "qrels", "qrels.jsonl:1",
     "grade true is a boolean, not a number"),
    ("bool-grade-labels", "queries.jsonl",
     jsonl({"id": "q1", "labels": [{"id": "A", "relevance": True}]}), "qrels",
     "queries.jsonl:1", "relevance true is not a number"),
    ("string-grade-labels", "queries.jsonl",
     jsonl({"id": "q1", "labels": [{"id": "A", "relevance": "1"}]}), "qrels",
     "queries.jsonl:1", "relevance \"1\" is not a number"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_json_is_one_line_exit_2_nothing_written(tmp_path, case):
    _, name, content, role, where, reason = case
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    (tmp_path / "out.json").write_text("old\n")
    inputs = (["--qrels", name, "--run", "run.trec"] if role == "qrels"
              else ["--qrels", "qrels.txt", "--run", name])
    result = cli("score", *inputs, "-q", "-o", "out.json", "--per-query", "pq.tsv",
                 cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"skillret-eval: error: {where}: "), lines[0]
    assert reason in lines[0], lines[0]
    assert (tmp_path / "out.json").read_text() == "old\n"
    assert not (tmp_path / "pq.tsv").exists() and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("name, content, where", [
    ("qrels.json", '{"q1": {"A": 1e30}}', "qrels.json"),
    ("qrels.json", '{"q1": {"A": 1000000000000000000000000000000}}', "qrels.json"),
    ("qrels.jsonl", '{"query_id": "q1", "skill_id": "A", "relevance": 1e30}\n', "qrels.jsonl:1"),
    ("queries.jsonl", '{"id": "q1", "labels": [{"id": "A", "relevance": 1e30}]}\n',
     "queries.jsonl:1"),
])
def test_grades_out_of_range(tmp_path, name, content, where):
    (tmp_path / name).write_text(content)
    (tmp_path / "run.trec").write_text(RUN)
    result = cli("score", "--qrels", name, "--run", "run.trec", "-q", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"skillret-eval: error: {where}: grade "), result.stderr


@pytest.mark.parametrize("content, where, reason", [
    (None, "{dir}", "cannot be read"),
    (b"eval:\n  profiles: [official]\n  # caf\xe9\n", "params.yaml:3", "not UTF-8 text"),
    (b"eval: [official\n", "params.yaml:2", "not valid YAML"),
])
def test_bad_params_file_is_one_line(tmp_path, content, where, reason):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    if content is None:
        params = tmp_path / "conf"
        params.mkdir()
        where = str(params)
    else:
        params = tmp_path / "params.yaml"
        params.write_bytes(content)
    result = cli("score", "--qrels", "qrels.txt", "--run", "run.trec", "--params", params, "-q",
                 cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0], result.stderr
    assert where in lines[0], lines[0]


def test_nan_among_the_carried_metrics_is_reported_by_the_cross_check(tmp_path):
    """A stored NaN used to vanish from the cross-check (#21): it is checked, and differs."""
    doc = {"metrics": {"test": {"NDCG@10": float("nan"), "Recall@5": 1.0}},
           "retrieval": {"test": {"q1": {"A": 2.0, "B": 1.0}, "q2": {"D": 1.0}}}}
    (tmp_path / "results.json").write_text(json.dumps(doc))
    (tmp_path / "qrels.txt").write_text(QRELS)
    result = cli("validate", "--qrels", "qrels.txt", "--run", "results.json",
                 "--report", "report.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["cross_check"]["checked"] == 2, report["cross_check"]
    assert report["cross_check"]["differences"]["NDCG@10"]["file"] == "NaN"


def test_limits_are_options(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.json").write_text(json.dumps({"q1": {"A": 1.0}, "q2": {"D": 1.0}}))
    base = ["score", "--qrels", "qrels.txt", "--run", "run.json", "-q"]
    assert cli(*base, cwd=tmp_path).returncode == 0
    result = cli(*base, "--max-json-depth", "1", cwd=tmp_path)
    assert result.returncode == 2 and "nested deeper than 1 levels" in result.stderr
    result = cli(*base, "--max-input-size", "20", cwd=tmp_path)
    assert result.returncode == 2
    assert "run.json: is larger than 20 once decompressed" in result.stderr
    assert cli(*base, "--max-input-size", "1K", cwd=tmp_path).returncode == 0
    result = cli(*base, "--max-input-size", "lots", cwd=tmp_path)
    assert result.returncode == 2 and "not a size" in result.stderr
    (tmp_path / "deep.json").write_text('{"q1": {"A": [[[1]]]}}')
    deep = cli("score", "--qrels", "qrels.txt", "--run", "deep.json", "-q",
               "--max-json-depth", "100", cwd=tmp_path)
    assert deep.returncode == 2 and "not a number" in deep.stderr   # past the depth check


def test_a_jsonl_line_longer_than_a_parse_block(tmp_path):
    long_id = "S" * 3_000_000
    (tmp_path / "run.jsonl").write_text(jsonl({"query_id": "q1", "skill_id": long_id,
                                               "score": 1.0},
                                              {"query_id": "q2", "skill_id": "D", "score": 1.0}))
    run = open_run(tmp_path / "run.jsonl").read()
    assert run.skill_id.to_pylist() == [long_id, "D"]


# ---------------------------------------------------------------------- properties
def true_depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(true_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(true_depth, value), default=0)
    return 0


tricky_text = st.text(alphabet=st.sampled_from(list('ab[]{}"\\\n é')), max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=30)


@settings(max_examples=examples(300), deadline=None)
@given(value=json_values, limit=st.integers(0, 8), indent=st.sampled_from([None, 1]))
def test_depth_scan_equals_the_document_depth(value, limit, indent):
    """Brackets, quotes and backslashes inside strings never fool the vectorized scan."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert (_too_deep(text.encode(), limit) is None) == (true_depth(value) <= limit)


FIXTURE = [HealthCheck.function_scoped_fixture]  # tmp_path is only a place to write
ids = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)
good_scores = st.floats(allow_nan=False, allow_infinity=False, width=64) | st.integers(-10, 10)
bad_scores = (st.booleans() | st.none() | st.text(max_size=3) | st.just(float("nan"))
              | st.just(float("inf")) | st.lists(st.integers(), max_size=2))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=FIXTURE)
@given(run=st.dictionaries(ids, st.dictionaries(ids, good_scores | bad_scores, max_size=4),
                           min_size=1, max_size=5))
def test_json_run_reads_back_exactly_or_is_refused(tmp_path, run):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    bad = any(type(v) not in (int, float) or not math.isfinite(v)
              for docs in run.values() for v in docs.values())
    read = read_back_or_refused(read_run, path, bad)
    if read is not None:
        rows = sorted(zip(read.query_id.to_pylist(), read.skill_id.to_pylist(), read.score))
        assert rows == sorted((q, s, float(v)) for q, docs in run.items()
                              for s, v in docs.items())


def read_back_or_refused(reader, path: Path, bad: bool):
    """What ``reader`` read, or None when it refused the file, which it must iff ``bad``."""
    try:
        read = reader(path)
    except InputError as exc:
        assert bad, exc
        assert str(exc).startswith(str(path)), exc
        return None
    assert not bad
    return read


@settings(max_examples=examples(150), deadline=None, suppress_health_check=FIXTURE)
@given(qrels=st.dictionaries(ids, st.dictionaries(
    ids, st.integers(-3, 3) | st.booleans() | st.text(max_size=2) | st.floats(-3, 3),
    min_size=1, max_size=3), min_size=1, max_size=4))
def test_json_qrels_read_back_exactly_or_are_refused(tmp_path, qrels):
    path = tmp_path / "qrels.json"
    path.write_text(json.dumps(qrels))
    bad = any(type(v) not in (int, float) or v != int(v)
              for docs in qrels.values() for v in docs.values())
    read = read_back_or_refused(read_qrels, path, bad)
    if read is not None:
        got = sorted(zip(read.query_id.to_pylist(), read.skill_id.to_pylist(),
                         read.relevance.tolist()))
        assert got == sorted((q, s, int(v)) for q, docs in qrels.items()
                             for s, v in docs.items())


@settings(max_examples=examples(200), deadline=None, suppress_health_check=FIXTURE)
@given(data=st.binary(max_size=200)
       | st.text(alphabet=st.sampled_from(list('{}[]":,0.1eq\\ \n')), max_size=200).map(str.encode))
def test_arbitrary_bytes_never_raise_anything_but_an_input_error(tmp_path, data):
    for name, reader in (("x.json", read_run), ("y.jsonl", read_run), ("z.json", read_qrels),
                         ("w.jsonl", read_qrels)):
        path = tmp_path / name
        path.write_bytes(data)
        try:
            with limits.applied(json_depth=4):
                reader(path)
        except InputError as exc:
            assert str(exc).startswith(str(path)), exc
