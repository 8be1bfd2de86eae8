"""Every run format x every qrels format gives the same numbers.

One seeded random case (UUID-like and odd ids, ties, graded judgments, a judged query missing from
the run, an unjudged run query, an empty ranking where the format can express it) is written to
real files in every format the readers accept. Every combination must score exactly like the
original dicts under the official and mia5150 profiles, and like the reference (pytrec_eval used
as SkillRet's official evaluator uses it).

Two things legitimately differ between formats and split the matrix into families:

* a TREC run cannot say "this query retrieved nothing", so the empty ranking is absent there
  (the official profile averages an empty ranking as 0 but ignores an absent query);
* SkillRet's queries JSONL with ``skill_ids`` is binary: grade 1 for every listed skill, and
  grade-0 judgments do not exist.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import shutil
import uuid
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import reference
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import skillret
from skillret import cli
from skillret.io.readers import open_run, read_qrels
from skillret.api import validate

PROFILES = ("official", "mia5150")
SEED = 20250611


# ---------------------------------------------------------------------- the case
def make_case(seed: int = SEED):
    """(qrels, run): pytrec_eval-style dicts; the run holds one empty ranking."""
    rng = random.Random(seed)

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    # ids a careless reader turns into numbers, booleans, nulls, or splits on a comma
    odd_skills = ["007", "7", "07", "1.0", "1", "NaN", "null", "true", "x,y", "été", "技能",
                  "Ab", "aB", "-0", "1e3"]
    skills = [uid() for _ in range(40)] + odd_skills
    odd_queries = ["007", "7", "nan", "1e5", "true", "q-été", "x,y", "Q.2"]
    queries = [uid() for _ in range(6)] + odd_queries
    rng.shuffle(queries)
    missing, unjudged, empty, zero_only = "missing-q", "unjudged-q", "empty-q", "zero-only-q"

    qrels: dict[str, dict[str, int]] = {}
    for q in queries + [missing, empty]:
        chosen = rng.sample(skills, rng.randint(1, 8))
        grades = [rng.choice([0, 1, 1, 2, 3]) for _ in chosen]
        grades[0] = max(grades[0], 1)
        qrels[q] = dict(zip(chosen, grades))
    qrels[zero_only] = {s: 0 for s in rng.sample(skills, 3)}

    ties = [1.0, 0.5, 0.25, 0.1, float(np.nextafter(0.1, 1.0))]  # the last two tie as float32
    run: dict[str, dict[str, float]] = {}
    order = queries[:5] + [empty] + queries[5:] + [unjudged, zero_only]
    for q in order:
        if q == empty:
            run[q] = {}
            continue
        judged = list(qrels.get(q, {}))
        pool = rng.sample(judged, rng.randint(0, len(judged))) + rng.sample(skills, 20)
        chosen = list(dict.fromkeys(pool))[: rng.randint(3, 22)]
        ranking = {}
        for s in chosen:
            kind = rng.random()
            if kind < 0.4:
                ranking[s] = rng.choice(ties)
            elif kind < 0.8:
                ranking[s] = round(rng.uniform(-3, 3), 3)
            else:
                ranking[s] = rng.uniform(-1e3, 1e3)
        run[q] = ranking
    return qrels, run


QRELS, RUN = make_case()
EMPTY = [q for q, docs in RUN.items() if not docs]
RUN_NO_EMPTY = {q: docs for q, docs in RUN.items() if docs}
QRELS_BINARY = {q: {s: 1 for s, g in docs.items() if g >= 1} for q, docs in QRELS.items()}
QRELS_BINARY = {q: docs for q, docs in QRELS_BINARY.items() if docs}


def test_the_case_has_what_it_should():
    assert EMPTY and EMPTY[0] in QRELS
    assert any(q not in RUN for q in QRELS)                       # judged, missing from run
    assert any(q not in QRELS for q in RUN)                       # run query without judgments
    assert any(set(QRELS[q].values()) == {0} for q in QRELS)       # judged only with grade 0
    assert {g for docs in QRELS.values() for g in docs.values()} >= {0, 1, 2, 3}
    assert any(len(set(d.values())) < len(d) for d in RUN.values())  # ties
    lengths = [len(d) for d in RUN.values() if d]
    assert min(lengths) < 15 < max(lengths)
    assert "007" in RUN and "7" in RUN


# ---------------------------------------------------------------------- writers
def rows(run: dict, *, markers: bool):
    """(query, skill, score, rank) rows in run order; rank by score; (q, None, None, None) for
    an empty ranking when ``markers``."""
    for q, docs in run.items():
        if not docs and markers:
            yield q, None, None, None
        ordered = sorted(docs.items(), key=lambda kv: -kv[1])
        for rank, (s, v) in enumerate(ordered, 1):
            yield q, s, v, rank


def qrel_rows(qrels: dict):
    for q, docs in qrels.items():
        for s, g in docs.items():
            yield q, s, g


def put(path: Path, text: str, gz: bool = False) -> Path:
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def trec_run_text(run: dict) -> str:
    return "".join(f"{q} Q0 {s} {r} {v!r} tag\n" for q, s, v, r in rows(run, markers=False))


def messy_trec_run_text(run: dict) -> str:
    """What trec_eval also reads: comments, blank lines, tabs and runs of blanks between fields,
    fields after the tag, and queries whose rows are not consecutive (first appearances kept in
    run order, so the official mean adds in the same order)."""
    first, second = [], []
    for q, docs in run.items():
        lines = [(q, s, v, r) for q0, s, v, r in rows({q: docs}, markers=False)]
        half = (len(lines) + 1) // 2
        first += lines[:half]
        second += lines[half:]
    out = ["# a comment line\n", "\n"]
    for i, (q, s, v, r) in enumerate(first + second):
        sep = ["  ", "\t", " \t "][i % 3]
        extra = " extra fields" if i % 7 == 0 else ""
        out.append(f"{q}{sep}Q0 {s}{sep}{r} {v!r}{sep}tag{extra}\n")
        if i % 11 == 0:
            out.append("   \n# another comment\n")
    return "".join(out)


def csv_text(header, body, delimiter=",") -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    for row in body:
        writer.writerow(["" if x is None else (repr(x) if isinstance(x, float) else x)
                         for x in row])
    return buf.getvalue()


def run_csv_text(run: dict, delimiter=",", header=("query_id", "skill_id", "score")) -> str:
    return csv_text(header, ((q, s, v) for q, s, v, _ in rows(run, markers=True)), delimiter)


def run_jsonl_text(run: dict) -> str:
    return "".join(json.dumps({"query_id": q, "skill_id": s, "score": v}, ensure_ascii=False)
                   + "\n" for q, s, v, _ in rows(run, markers=True))


def run_table(run: dict) -> pa.Table:
    q, s, v, r = zip(*rows(run, markers=True))
    return pa.table({"query_id": pa.array(q, pa.string()), "skill_id": pa.array(s, pa.string()),
                     "score": pa.array(v, pa.float64()), "rank": pa.array(r, pa.int64())})


def results_json(run: dict, split: str = "test", other_split: str | None = "dev") -> str:
    """SkillRet's results JSON, carrying the official metrics of ``run`` on QRELS."""
    retrieval = {split: run}
    metrics = {split: skillret.trec_eval(QRELS, run)}
    if other_split:
        decoy = {q: {"decoy": 1.0} for q in list(run)[:2]}  # another split: must not be read
        retrieval = {other_split: decoy, **retrieval}
        metrics[other_split] = {"NDCG@5": 0.0}
    return json.dumps({"metrics": metrics, "retrieval": retrieval}, ensure_ascii=False)


def queries_jsonl_text(qrels: dict, how: str) -> str:
    out = []
    for i, (q, docs) in enumerate(qrels.items()):
        item = {"id": q, "query": f"query number {i}, with \"quotes\" and a comma"}
        labels = [{"id": s, "relevance": g} for s, g in docs.items()]
        if how == "labels":
            item["labels"] = labels
        elif how == "labels-string":
            item["labels"] = json.dumps(labels, ensure_ascii=False)
        else:
            item["skill_ids"] = [s for s, g in docs.items() if g >= 1]
        out.append(json.dumps(item, ensure_ascii=False) + "\n")
    return "".join(out)


def run_dataframe(run: dict) -> pd.DataFrame:
    q, s, v, _ = zip(*rows(run, markers=True))
    return pd.DataFrame({"query_id": q, "skill_id": s,
                         "score": [np.nan if x is None else x for x in v]})


def qrels_dataframe(qrels: dict) -> pd.DataFrame:
    q, s, g = zip(*qrel_rows(qrels))
    return pd.DataFrame({"query_id": q, "skill_id": s, "relevance": g})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """{name: (input, family)} for runs and qrels: paths of every format, plus in-memory ones.

    Run families: "full" (the empty ranking is in the run) and "trec" (it cannot be).
    Qrels families: "graded" and "binary" (skill_ids)."""
    d = tmp_path_factory.mktemp("formats")
    runs, qrels = {}, {}

    trec = trec_run_text(RUN)
    runs["run.trec"] = put(d / "run.trec", trec), "trec"
    runs["run.trec.gz"] = put(d / "run.trec.gz", trec, gz=True), "trec"
    runs["run.txt"] = put(d / "run.txt", trec), "trec"
    runs["messy.run"] = put(d / "messy.run", messy_trec_run_text(RUN)), "trec"
    runs["messy.run.gz"] = put(d / "messy.run.gz", messy_trec_run_text(RUN), gz=True), "trec"
    runs["results.json"] = put(d / "results.json", results_json(RUN)), "full"
    runs["results.json.gz"] = put(d / "results.json.gz", results_json(RUN), gz=True), "full"
    runs["results-one-split.json"] = put(d / "results-one-split.json",
                                         results_json(RUN, "validation", None)), "full"
    flat = json.dumps(RUN, ensure_ascii=False)
    runs["run.json"] = put(d / "run.json", flat), "full"
    runs["run.json.gz"] = put(d / "run.json.gz", flat, gz=True), "full"
    runs["run.jsonl"] = put(d / "run.jsonl", run_jsonl_text(RUN)), "full"
    runs["run.jsonl.gz"] = put(d / "run.jsonl.gz", run_jsonl_text(RUN), gz=True), "full"
    runs["run.csv"] = put(d / "run.csv", run_csv_text(RUN)), "full"
    runs["run.csv.gz"] = put(d / "run.csv.gz", run_csv_text(RUN), gz=True), "full"
    runs["run.tsv"] = put(d / "run.tsv", run_csv_text(RUN, "\t")), "full"
    runs["run.tsv.gz"] = put(d / "run.tsv.gz", run_csv_text(RUN, "\t"), gz=True), "full"
    pq.write_table(run_table(RUN), d / "run.parquet")
    runs["run.parquet"] = d / "run.parquet", "full"
    runs["dict"] = RUN, "full"
    runs["DataFrame"] = run_dataframe(RUN), "full"

    trec_q = "".join(f"{q} 0 {s} {g}\n" for q, s, g in qrel_rows(QRELS))
    qrels["qrels.txt"] = put(d / "qrels.txt", trec_q), "graded"
    qrels["qrels.qrels.gz"] = put(d / "qrels.qrels.gz", trec_q, gz=True), "graded"
    jsonl = "".join(json.dumps({"query_id": q, "skill_id": s, "relevance": g},
                               ensure_ascii=False) + "\n" for q, s, g in qrel_rows(QRELS))
    qrels["qrels.jsonl"] = put(d / "qrels.jsonl", jsonl), "graded"
    qrels["qrels.jsonl.gz"] = put(d / "qrels.jsonl.gz", jsonl, gz=True), "graded"
    for how, family in (("labels", "graded"), ("labels-string", "graded"),
                        ("skill_ids", "binary")):
        text = queries_jsonl_text(QRELS, how)
        qrels[f"queries-{how}.jsonl"] = put(d / f"queries-{how}.jsonl", text), family
    qrels["queries-labels.jsonl.gz"] = put(d / "queries-labels.jsonl.gz",
                                           queries_jsonl_text(QRELS, "labels"), gz=True), "graded"
    qjson = json.dumps(QRELS, ensure_ascii=False)
    qrels["qrels.json"] = put(d / "qrels.json", qjson), "graded"
    qrels["qrels.json.gz"] = put(d / "qrels.json.gz", qjson, gz=True), "graded"
    header = ("query_id", "skill_id", "relevance")
    qrels["qrels.csv"] = put(d / "qrels.csv", csv_text(header, qrel_rows(QRELS))), "graded"
    qrels["qrels.tsv.gz"] = put(d / "qrels.tsv.gz", csv_text(header, qrel_rows(QRELS), "\t"),
                                gz=True), "graded"
    qrels["qrels.tsv"] = put(d / "qrels.tsv", csv_text(header, qrel_rows(QRELS), "\t")), "graded"
    q, s, g = zip(*qrel_rows(QRELS))
    pq.write_table(pa.table({"query_id": q, "skill_id": s, "relevance": pa.array(g, pa.int32())}),
                   d / "qrels.parquet")
    qrels["qrels.parquet"] = d / "qrels.parquet", "graded"
    # SkillRet data directories: qrels/<split>.jsonl wins over queries/<split>.jsonl
    for name, parts in (("data-qrels", ("qrels",)), ("data-queries", ("queries",)),
                        ("data-both", ("qrels", "queries"))):
        for part in parts:
            (d / name / part).mkdir(parents=True)
        qrels[name] = d / name, "graded"
    put(d / "data-qrels" / "qrels" / "test.jsonl", jsonl)
    put(d / "data-queries" / "queries" / "test.jsonl.gz", queries_jsonl_text(QRELS, "labels"),
        gz=True)
    put(d / "data-both" / "qrels" / "test.jsonl", jsonl)
    put(d / "data-both" / "queries" / "test.jsonl", queries_jsonl_text(QRELS, "skill_ids"))
    qrels["dict"] = QRELS, "graded"
    qrels["DataFrame"] = qrels_dataframe(QRELS), "graded"
    return {"dir": d, "runs": runs, "qrels": qrels}


# ---------------------------------------------------------------------- expectations
def mia5150_reference(qrels: dict, run: dict) -> dict:
    per_query = reference.per_query(qrels, run, (5, 10, 15))
    names = [(m, k) for m in ("NDCG", "MAP", "Recall", "Precision", "Completeness")
             for k in (5, 10, 15)] + [("MRR", 5), ("MRR", 10)]
    return {f"{m}@{k}": round(reference.all_judged_mean(qrels, per_query, (m, k)), 5)
            for m, k in names}


RUN_FAMILIES = {"full": RUN, "trec": RUN_NO_EMPTY}
QRELS_FAMILIES = {"graded": QRELS, "binary": QRELS_BINARY}


@pytest.fixture(scope="module")
def expected():
    out = {}
    for qf, qrels in QRELS_FAMILIES.items():
        for rf, run in RUN_FAMILIES.items():
            official = reference.official_trec_eval(qrels, run)
            assert list(skillret.trec_eval(qrels, run).items()) == list(official.items())
            mia = mia5150_reference(qrels, run)
            got = {p: skillret.evaluate(qrels, run, p) for p in PROFILES}
            assert list(got["official"].items()) == list(official.items())
            assert got["mia5150"] == mia
            out[qf, rf] = got
    # the families really differ, so the matrix below tells them apart
    assert out["graded", "full"]["official"] != out["graded", "trec"]["official"]
    assert out["graded", "full"]["mia5150"] == out["graded", "trec"]["mia5150"]
    assert out["graded", "full"]["official"] != out["binary", "full"]["official"]
    return out


# ---------------------------------------------------------------------- the matrix
def test_every_run_format_with_every_qrels_format(files, expected):
    failures = []
    for qname, (qrels, qf) in files["qrels"].items():
        for rname, (run, rf) in files["runs"].items():
            scores = skillret.score(qrels, run, PROFILES)     # every profile in one pass
            for profile in PROFILES:
                got = scores.metrics[profile]
                want = expected[qf, rf][profile]
                if list(got.items()) != list(want.items()):
                    failures.append((qname, rname, profile, got, want))
    assert not failures, failures[:3]


def test_readers_keep_ids_exactly_as_written(files):
    want = {(q, s): v for q, docs in RUN.items() for s, v in docs.items()}
    for name, (run, family) in files["runs"].items():
        if isinstance(run, (dict, pd.DataFrame)):
            continue
        loaded = open_run(run).read()
        got = dict(zip(zip(loaded.query_id.to_pylist(), loaded.skill_id.to_pylist()),
                       loaded.score.tolist()))
        assert got == want, name
        expect_queries = list(RUN if family == "full" else RUN_NO_EMPTY)
        assert loaded.queries.to_pylist() == expect_queries, name
    for name, (qrels, family) in files["qrels"].items():
        if isinstance(qrels, (dict, pd.DataFrame)):
            continue
        loaded = read_qrels(qrels)
        source = QRELS if family == "graded" else QRELS_BINARY
        assert loaded.to_dict() == source, name


def test_score_command_reads_every_format(files, expected, tmp_path):
    """The CLI's own code path (in process: a subprocess per file would be slow)."""
    def score(qrels, run):
        out = tmp_path / "m.json"
        assert cli.main(["score", "--qrels", str(qrels), "--run", str(run), "-q", "-o", str(out),
                         *[a for p in PROFILES for a in ("--profile", p)]]) == 0
        return json.loads(out.read_text())

    qrels_path = files["qrels"]["qrels.txt"][0]
    for name, (run, family) in files["runs"].items():
        if isinstance(run, Path):
            got = score(qrels_path, run)
            for p in PROFILES:
                assert got[p] == expected["graded", family][p], name
    run_path = files["runs"]["run.trec.gz"][0]
    for name, (qrels, family) in files["qrels"].items():
        if isinstance(qrels, Path):
            got = score(qrels, run_path)
            for p in PROFILES:
                assert got[p] == expected[family, "trec"][p], name


# ---------------------------------------------------------------------- choosing the format
def test_format_override_and_detection_by_content(files, expected, tmp_path):
    d = files["dir"]
    want_trec = expected["graded", "trec"]["official"]
    want_full = expected["graded", "full"]["official"]
    # a TREC run under any name, and a JSONL run without an extension
    shutil.copy(d / "run.trec", tmp_path / "run.dat")
    shutil.copy(d / "run.trec", tmp_path / "run-no-extension")
    shutil.copy(d / "run.jsonl", tmp_path / "rows")
    shutil.copy(d / "run.json", tmp_path / "mapping")
    shutil.copy(d / "run.jsonl", tmp_path / "rows.txt")    # the extension says TREC, wrongly
    shutil.copy(d / "run.csv", tmp_path / "table.data")
    for name, fmt, want in (("run.dat", None, want_trec), ("run-no-extension", None, want_trec),
                            ("run-no-extension", "trec", want_trec),
                            ("rows", None, want_full), ("mapping", None, want_full),
                            ("rows.txt", "jsonl", want_full), ("table.data", "csv", want_full)):
        got = skillret.score(QRELS, open_run(tmp_path / name, fmt=fmt).read()).metrics["official"]
        assert got == want, (name, fmt)
    # CLI: --format and --qrels-format
    shutil.copy(d / "qrels.jsonl", tmp_path / "judgments.txt")
    out = tmp_path / "m.json"
    assert cli.main(["score", "--qrels", str(tmp_path / "judgments.txt"), "--qrels-format",
                     "jsonl", "--run", str(tmp_path / "rows.txt"), "--format", "jsonl", "-q",
                     "-o", str(out)]) == 0
    assert json.loads(out.read_text())["official"] == want_full
    with pytest.raises(skillret.InputError, match="unknown run format 'xml'"):
        open_run(d / "run.trec", fmt="xml").read()


def test_split_choice(files, tmp_path):
    d = files["dir"]
    # default: "test" among several splits; --split picks another
    assert open_run(d / "results.json").read().metadata["split"] == "test"
    dev = open_run(d / "results.json", split="dev").read()
    assert dev.metadata["split"] == "dev" and set(dev.skill_id.to_pylist()) == {"decoy"}
    assert open_run(d / "results-one-split.json").read().metadata["split"] == "validation"
    with pytest.raises(skillret.InputError, match="has no split 'train'"):
        open_run(d / "results.json", split="train").read()
    several = json.loads(results_json(RUN, "a", "b"))
    (tmp_path / "several.json").write_text(json.dumps(several))
    with pytest.raises(skillret.InputError, match="holds several splits .*--split"):
        open_run(tmp_path / "several.json").read()
    # a data directory's split
    data = tmp_path / "data"
    (data / "qrels").mkdir(parents=True)
    (data / "qrels" / "dev.jsonl").write_text('{"query_id": "q", "skill_id": "s", '
                                              '"relevance": 1}\n')
    assert read_qrels(data, split="dev").to_dict() == {"q": {"s": 1}}
    with pytest.raises(skillret.InputError, match="without qrels/test.jsonl"):
        read_qrels(data)


def test_columns_renaming(files, expected, tmp_path):
    want = expected["graded", "full"]
    header = ("topic_x", "doc_x", "value")
    path = put(tmp_path / "renamed.csv", run_csv_text(RUN, header=header))
    with pytest.raises(skillret.InputError, match="has no query, skill or score column"):
        open_run(path).read()
    columns = {"query": "topic_x", "skill": "doc_x", "score": "value"}
    for profile in PROFILES:
        loaded = open_run(path, columns=columns).read()
        assert skillret.evaluate(QRELS, loaded, profile) == want[profile]
    out = tmp_path / "m.json"
    for spec in ("query=topic_x,skill=doc_x,score=value", "topic_x,doc_x,value"):
        assert cli.main(["score", "--qrels", str(files["qrels"]["qrels.txt"][0]), "--run",
                         str(path), "--columns", spec, "-q", "-o", str(out)]) == 0
        assert json.loads(out.read_text())["official"] == want["official"]
    with pytest.raises(skillret.InputError, match="has no column 'nope'"):
        open_run(path, columns={"query": "nope", "skill": "doc_x", "score": "value"}).read()
    # common alternative names need no --columns
    path = put(tmp_path / "aliases.tsv", run_csv_text(RUN, "\t", ("qid", "docno", "sim")))
    assert skillret.evaluate(QRELS, path) == want["official"]
    # DataFrames with other names
    frame = run_dataframe(RUN).rename(columns={"query_id": "topic_x", "skill_id": "doc_x",
                                               "score": "value"})
    assert skillret.evaluate(QRELS, open_run(frame, columns=columns).read()) == want["official"]


def test_numeric_looking_ids_stay_as_written(tmp_path):
    """"007" is not 7, "1e3" is not 1000.0, "true" is not True, "NaN" is not a missing value."""
    ids = ["007", "7", "1e3", "true", "NaN", "-0", "1.0"]
    qrels = {q: {s: 1 for s in ids} for q in ids}
    run = {q: {s: float(i) for i, s in enumerate(ids)} for q in ids}
    want = skillret.evaluate(qrels, run, "mia5150")
    body = [(q, s, v) for q, docs in run.items() for s, v in docs.items()]
    qbody = [(q, s, g) for q, docs in qrels.items() for s, g in docs.items()]
    for ext, delim in (("csv", ","), ("tsv", "\t")):
        rpath = put(tmp_path / f"run.{ext}", csv_text(("query_id", "skill_id", "score"), body,
                                                      delim))
        qpath = put(tmp_path / f"qrels.{ext}", csv_text(("query_id", "skill_id", "relevance"),
                                                        qbody, delim))
        loaded = open_run(rpath).read()
        assert loaded.queries.to_pylist() == ids
        assert loaded.skill_id.to_pylist()[: len(ids)] == ids
        assert read_qrels(qpath).to_dict() == qrels
        assert skillret.evaluate(qpath, rpath, "mia5150") == want
    # a column holding only digits: still text, leading zeros kept
    only_digits = put(tmp_path / "digits.csv", "query_id,skill_id,score\n007,001,1.5\n"
                                               "007,01,0.5\n8,1,1\n")
    loaded = open_run(only_digits).read()
    assert loaded.query_id.to_pylist() == ["007", "007", "8"]
    assert loaded.skill_id.to_pylist() == ["001", "01", "1"]
    # a column holding only booleans or only "NaN": still ids
    path = put(tmp_path / "bools.tsv", "query_id\tskill_id\tscore\nNaN\ttrue\t1\nNaN\tfalse\t2\n")
    loaded = open_run(path).read()
    assert loaded.queries.to_pylist() == ["NaN"]
    assert loaded.skill_id.to_pylist() == ["true", "false"]
    # blanks around a number are fine (ids keep theirs: they are written that way)
    path = put(tmp_path / "spaced.csv", "query_id,skill_id,score\nq1,A, 1.5\nq1,B ,2 \n")
    loaded = open_run(path).read()
    assert loaded.skill_id.to_pylist() == ["A", "B "] and loaded.score.tolist() == [1.5, 2.0]
    # JSON numbers as ids are written without quotes: they become their text
    path = put(tmp_path / "numbers.jsonl", '{"query_id": 7, "skill_id": 301, "score": 1}\n')
    assert open_run(path).read().skill_id.to_pylist() == ["301"]


def test_dataframe_inputs(expected):
    want = expected["graded", "full"]
    qrels = qrels_dataframe(QRELS)
    run = run_dataframe(RUN)
    for profile in PROFILES:
        assert skillret.evaluate(qrels, run, profile) == want[profile]
    # per_query accepts them too, and so does a DataFrame with a rank column
    run["rank"] = run.groupby("query_id").cumcount() + 1
    frame = skillret.per_query(qrels, run, "mia5150")
    assert len(frame) == len([q for q, d in QRELS.items() if d])
    assert round(frame["MRR@5"].sum() / len(frame), 5) == want["mia5150"]["MRR@5"]


# ---------------------------------------------------------------------- canonical form
def test_normalized_run_reads_back_and_scores_identically(files, expected, tmp_path):
    d = files["dir"]
    outputs = {}
    for name in ("run.trec", "messy.run", "run.trec.gz", "run.json", "results.json", "run.csv",
                 "run.jsonl", "run.parquet"):
        family = files["runs"][name][1]
        target = tmp_path / f"{name}.parquet"
        validate(d / "qrels.txt", d / name, normalized=target)
        outputs[name] = target.read_bytes()
        table = pq.read_table(target)
        assert table.schema.names == ["query_id", "skill_id", "score", "rank"]
        for profile in PROFILES:
            assert skillret.evaluate(QRELS, target, profile) == expected["graded", family][profile]
        # the canonical table is in tie-rule order, ranks 1..n per query
        frame = table.to_pandas()
        nonempty = frame[frame["skill_id"].notna()]
        assert (nonempty.groupby("query_id", sort=False)["rank"]
                .apply(lambda r: list(r) == list(range(1, len(r) + 1))).all())
        assert frame["query_id"].drop_duplicates().tolist() == list(RUN_FAMILIES[family])
        # validating the canonical file again gives the same file
        again = tmp_path / f"{name}.again.parquet"
        validate(d / "qrels.txt", target, normalized=again)
        assert again.read_bytes() == outputs[name], name
    # one canonical form per family, whatever the input format
    assert outputs["run.trec"] == outputs["messy.run"] == outputs["run.trec.gz"]
    assert (outputs["run.json"] == outputs["results.json"] == outputs["run.csv"]
            == outputs["run.jsonl"] == outputs["run.parquet"])


def test_writing_the_canonical_run_is_deterministic(files, tmp_path):
    d = files["dir"]
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for target in (a, b):
        assert cli.main(["validate", "--qrels", str(d / "qrels.jsonl"), "--run",
                         str(d / "run.trec"), "--normalized", str(target),
                         "--report", str(target.with_suffix(".json"))]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert a.with_suffix(".json").read_bytes() == b.with_suffix(".json").read_bytes()
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("block", [None, 1024, 200, 40],
                         ids=["one-block", "blocks-1k", "blocks-200", "blocks-40"])
def test_streamed_in_small_blocks_gives_the_same_numbers_and_bytes(files, expected, tmp_path,
                                                                   monkeypatch, block):
    """A TREC run streamed in many small blocks (many chunks, rows held back across block
    boundaries) scores like the whole file, and its canonical Parquet is byte-identical to the
    one written from another format, row groups included. Blocks of 200 bytes hold a few lines,
    blocks of 40 bytes are shorter than a line; plain and gzip files alike."""
    import skillret.io.write_runs
    monkeypatch.setattr(skillret.io.write_runs, "CANONICAL_ROW_GROUP", 7)
    size = {} if block is None else {"block_size": block}
    d = files["dir"]
    for name in ("run.trec", "run.trec.gz", "messy.run"):
        for profile in PROFILES:
            got = skillret.evaluate(d / "qrels.jsonl", open_run(d / name, **size), profile)
            assert got == expected["graded", "trec"][profile], (name, profile)
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    validate(QRELS, open_run(d / "run.trec", **size), normalized=a)
    validate(QRELS, RUN_NO_EMPTY, normalized=b)
    assert pq.ParquetFile(a).metadata.num_row_groups == -(-len(pq.read_table(a)) // 7)
    assert a.read_bytes() == b.read_bytes()


@settings(max_examples=examples(150), deadline=None)
@given(groups=st.lists(st.tuples(st.sampled_from(["q1", "q10", "q2", "q", "longer-query-id"]),
                                 st.integers(1, 6)), min_size=1, max_size=12),
       block=st.integers(1, 120), final_newline=st.booleans(), gz=st.booleans(),
       search=st.sampled_from([1, 2, 4096]), odd=st.sampled_from(["", "\n", "# c\n", "  \t\n"]))
def test_blocks_are_whole_lines_and_cut_between_groups(tmp_path_factory, groups, block,
                                                       final_newline, gz, search, odd):
    """Blocks of a file: together the whole file; each but the last ends a line; a line longer
    than a block is read whole; the lines are numbered across blocks. When a block says it ends
    a group, the next data line starts another first field (the query); groups longer than the
    search for their start are cut at a line, not between groups. Blank and comment lines
    (``odd``, after every third line) change nothing."""
    from skillret.io import text
    lines = [f"{q} Q0 s{i} {i} 1.0 tag" for q, n in groups for i in range(n)]
    lines = [ln + ("\n" + odd.rstrip("\n") if odd and k % 3 == 2 else "")
             for k, ln in enumerate(lines)]
    data = ("\n".join(lines) + ("\n" if final_newline else "")).encode()
    path = tmp_path_factory.mktemp("blocks") / ("run.trec.gz" if gz else "run.trec")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    with mock.patch.object(text, "GROUP_LINES", search):
        blocks = list(text.blocks(path, block))
    assert b"".join(b for b, _ in blocks) == data
    offset = 0
    for i, (chunk, ends_group) in enumerate(blocks):
        offset += len(chunk)
        last = i == len(blocks) - 1
        assert last or chunk.endswith(b"\n")
        if last:
            assert ends_group
        elif ends_group:
            data_lines = [ln.split()[0] for ln in chunk.split(b"\n")
                          if ln.split() and not ln.startswith(b"#")]
            following = [ln.split()[0] for ln in data[offset:].split(b"\n")
                         if ln.split() and not ln.startswith(b"#")]
            assert not data_lines or not following or data_lines[-1] != following[0]
    from skillret.io import text
    numbers = [n for batch in text.run_batches(path, block_size=block) for n in batch.line]
    assert numbers == [k + 1 for k, ln in enumerate(data.decode().split("\n"))
                       if ln.split() and not ln.startswith("#")]


def test_comment_lines_past_the_sniffed_head_are_skipped(tmp_path):
    """The fast path sniffs the first 200 lines; a ``#`` line further down, even one with as
    many fields as a result or a judgment, is skipped as on the general path."""
    rng = random.Random(7)
    qrels_lines = [f"q{i:03d} 0 s{i % 17:02d} {1 + i % 2}" for i in range(300)]
    run_lines = [f"q{i // 3:03d} Q0 s{(i * 7) % 23:02d} {i % 3 + 1} {rng.random():.4f} r"
                 for i in range(900)]
    run_lines = [line for k, line in enumerate(run_lines)
                 if line.split()[2] not in {x.split()[2] for x in run_lines[k - k % 3:k]}]
    plain = {"qrels.txt": qrels_lines, "run.trec": run_lines}
    commented = {"qrels.txt": qrels_lines[:250] + ["# 0 s01 1"] + qrels_lines[250:],
                 "run.trec": run_lines[:600] + ["# Q0 s01 1 1.0 r"] + run_lines[600:]}
    scores = []
    for name, files in (("plain", plain), ("commented", commented)):
        d = tmp_path / name
        d.mkdir()
        for file, lines in files.items():
            (d / file).write_text("\n".join(lines) + "\n")
        result = skillret.score(d / "qrels.txt", d / "run.trec", ["official", "mia5150"])
        scores.append(result.to_dict())
        assert len(read_qrels(d / "qrels.txt")) == 300
    assert scores[0] == scores[1]


@pytest.mark.parametrize("block", [None, 300], ids=["one-block", "blocks-300"])
def test_a_run_whose_queries_are_not_contiguous_is_read_whole(files, tmp_path, block):
    """A regular TREC run (the fast path) whose queries come back later in the file cannot be
    streamed: it is scored from memory, equal to the contiguous file, and the notice says how to
    sort it."""
    size = {} if block is None else {"block_size": block}
    d = files["dir"]
    lines = (d / "run.trec").read_text().splitlines(keepends=True)
    by_query: dict[str, list[str]] = {}
    for line in lines:
        by_query.setdefault(line.split()[0], []).append(line)
    first = [ln for q in by_query.values() for ln in q[: (len(q) + 1) // 2]]
    second = [ln for q in by_query.values() for ln in q[(len(q) + 1) // 2:]]
    split = tmp_path / "split.trec"
    split.write_text("".join(first + second))
    got = skillret.score(d / "qrels.jsonl", open_run(split, **size), ["official", "mia5150"])
    whole = skillret.score(d / "qrels.jsonl", d / "run.trec", ["official", "mia5150"])
    assert got.to_dict() == whole.to_dict()
    again = second[0].split()[0]
    assert got.notices == [
        f"{split}: the rows of query {again!r} start again at line {len(first) + 1:,}, after "
        f"other queries' rows, so the run was read into memory instead of streamed; to stream "
        f"it, group it by query first: sort -k1,1 -s {split} > sorted.trec"]
    assert not whole.notices


def test_the_grouping_hint_for_a_gzip_run_decompresses_first(tmp_path):
    """``sort`` on a .gz file would sort compressed bytes: the hint pipes through zcat, and
    following it gives a grouped run that is streamed without a note."""
    import subprocess
    run = tmp_path / "u.trec.gz"
    run.write_bytes(gzip.compress(b"q0 Q0 d1 1 1 t\nq1 Q0 d2 1 1 t\nq0 Q0 d3 1 0.5 t\n"))
    (tmp_path / "q.txt").write_text("q0 0 d3 1\nq1 0 d2 1\n")
    got = skillret.score(tmp_path / "q.txt", run)
    hint = got.notices[0].rpartition("group it by query first: ")[2]
    assert hint == f"zcat {run} | sort -k1,1 -s | gzip > sorted.trec.gz"
    subprocess.run(hint, shell=True, check=True, cwd=tmp_path)
    again = skillret.score(tmp_path / "q.txt", tmp_path / "sorted.trec.gz")
    assert again.to_dict() == got.to_dict() and not again.notices


def test_an_ungrouped_parquet_run_is_read_whole_and_says_how_to_group_it(files, tmp_path):
    """A Parquet run whose queries come back later is found out as it is streamed, scored from
    memory equal to the grouped file, and the notice says how to group a table (sort would
    not do for Parquet)."""
    import pyarrow.parquet as pq
    d = files["dir"]
    run = open_run(d / "run.trec").read()
    table = pa.table({"query_id": run.query_id, "skill_id": run.skill_id, "score": run.score})
    grouped, ungrouped = tmp_path / "grouped.parquet", tmp_path / "ungrouped.parquet"
    pq.write_table(table, grouped, row_group_size=50)
    n = len(table)
    order = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)])  # every query split
    pq.write_table(table.take(pa.array(order)), ungrouped, row_group_size=50)
    whole = skillret.score(d / "qrels.jsonl", d / "run.trec", ["official", "mia5150"]).to_dict()
    got = skillret.score(d / "qrels.jsonl", grouped, ["official", "mia5150"])
    assert got.to_dict() == whole and not got.notices
    got = skillret.score(d / "qrels.jsonl", ungrouped, ["official", "mia5150"])
    assert got.to_dict() == whole
    again = run.query_id[0].as_py()
    assert got.notices == [
        f"{ungrouped}: the rows of query {again!r} start again, after other queries' rows, so "
        f"the run was read into memory instead of streamed; to stream it, group it by query "
        f"first: write it with each query's rows together (stably sorted by query id)"]
