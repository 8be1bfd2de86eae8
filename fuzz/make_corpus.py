"""Write the seed corpora under ``fuzz/corpus/<target>/``: small valid inputs in each format.

Run it again after changing a target's input layout (the selector byte that starts most inputs,
see each target's docstring). Seeds come from ``data/sample/`` (its first lines) and from the
shapes the tests use; each is a few KB at most.

    python fuzz/make_corpus.py
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "data" / "sample"
CORPUS = HERE / "corpus"

RUN = (b"q1 Q0 s1 1 3.5 bm25\nq1 Q0 s9 2 2.0 bm25\nq1 Q0 s2 3 1.0 bm25\n"
       b"q2 Q0 s3 1 0.5 bm25\nq2 Q0 s1 2 0.25 bm25\n")
RUN_ODD = (b"# a comment\n\nq1\tQ0\ts1\t1\t3.5\tbm25\textra\n"
           b"q2 Q0 s3 1 -1e3 bm25\nq1 Q0 s2 2 1 bm25\n"
           b"q3 Q0 \xc2\xa0id 1 0.5 t\r\nq3  Q0  s4  x  .5  t\n")
QRELS = b"q1 0 s1 1\nq1 0 s2 2\nq2 0 s3 1\nq3 0 s1 0\n"
QRELS_ODD = b"# judged\nq1\t0\ts1\t1\n\nq2 0 s3 -1\r\nq3 Q0 \xe3\x80\x80x 2147483647\n"


def head_lines(path: Path, n: int) -> bytes:
    with open(path, "rb") as fh:
        return b"".join(fh.readline() for _ in range(n))


def sample_rows() -> list[dict]:
    lines = head_lines(SAMPLE / "qrels" / "test.jsonl", 6).split(b"\n")
    return [json.loads(line) for line in lines if line.strip()]


def run_dict() -> dict:
    return {"q1": {"s1": 3.5, "s9": 2.0, "s2": 1.0}, "q2": {"s3": 0.5, "s1": 0.25}, "q3": {}}


def qrels_dict() -> dict:
    return {"q1": {"s1": 1, "s2": 2}, "q2": {"s3": 1}, "q3": {"s1": 0}}


def results_json(splits=("test",)) -> bytes:
    doc = {"metrics": {s: {"NDCG@5": 0.5, "Recall@10": 1.0} for s in splits},
           "retrieval": {s: run_dict() for s in splits}}
    return json.dumps(doc, indent=1).encode()


def run_rows() -> list[dict]:
    return [{"query_id": q, "skill_id": s, "score": v, "rank": i + 1}
            for q, docs in run_dict().items() for i, (s, v) in enumerate(docs.items())]


def jsonl(rows) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def table_text(rows: list[dict], sep: str) -> bytes:
    names = list(rows[0])
    lines = [sep.join(names)] + [sep.join(str(r[n]) for n in names) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def parquet_bytes(rows: list[dict]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def seeds() -> dict[str, dict[str, bytes]]:
    qrels_rows = sample_rows()
    queries = head_lines(SAMPLE / "queries" / "test.jsonl", 2)
    run_json, qrels_json = json.dumps(run_dict()).encode(), json.dumps(qrels_dict()).encode()
    skill_ids = (b'{"id": "q1", "skill_ids": ["s1", "s2"]}\n'
                 b'{"id": "q2", "skill_ids": "[\\"s3\\"]"}\n')
    labels_str = b'{"id": "q1", "labels": "[{\\"id\\": \\"s1\\", \\"relevance\\": 2}]"}\n'
    runs = run_rows()
    qrows = [{"qid": q, "docno": s, "rel": g}
             for q, d in qrels_dict().items() for s, g in d.items()]
    empty_query = "query_id,skill_id,score\nq1,s1,1.5\nq2,,\n"
    out = {
        # selector: name/format, block size and way of reading (see fuzz_trec_run.py)
        "trec_run": {"plain": b"\x00" + RUN, "odd-chunks": b"\x29" + RUN_ODD,
                     "evaluate-64": b"\x48" + RUN, "rank-forced": b"\x84" + RUN_ODD,
                     "ungrouped-512": b"\x31" + RUN + RUN[:36]},
        "trec_qrels": {"plain": b"\x00" + QRELS, "odd": b"\x08" + QRELS_ODD,
                       "forced": b"\x04" + QRELS},
        "json": {"run": b"\x00" + run_json, "run-evaluate": b"\x20" + run_json,
                 "qrels": b"\x01" + qrels_json, "qrels-evaluate": b"\x09" + qrels_json,
                 "results": b"\x00" + results_json(), "results-forced": b"\x04" + results_json(),
                 "results-splits": b"\x14" + results_json(("dev", "test"))},
        "jsonl": {"sample-qrels": b"\x01" + jsonl(qrels_rows),
                  "sample-queries": b"\x05" + queries, "skill-ids": b"\x05" + skill_ids,
                  "labels-string": b"\x25" + labels_str, "run": b"\x00" + jsonl(runs),
                  "run-evaluate": b"\x40" + jsonl(runs),
                  "qrels-columns": b"\x11" + jsonl(qrows)},
        "csv": {"run-csv": b"\x00" + table_text(runs, ","),
                "run-tsv": b"\x42" + table_text(runs, "\t"),
                "run-empty-query": b"\x20" + empty_query.encode(),
                "qrels-csv": b"\x09" + table_text(qrows, ","),
                "qrels-tsv": b"\x13" + table_text(qrels_rows, "\t")},
        # mode 2/3: the bytes are the file; mode 0/1: a table built from the bytes
        "parquet": {"run": b"\x02" + parquet_bytes(runs),
                    "qrels": b"\x03" + parquet_bytes(qrels_rows),
                    "built": b"\x00" + bytes(range(64)),
                    "built-qrels": b"\x01" + bytes(range(64))},
        # gzip: the target compresses the content itself (selector: format and damage)
        "gzip": {"trec-run": b"\x00" + RUN, "trec-qrels": b"\x01" + QRELS,
                 "json-run": b"\x02" + run_json, "json-qrels": b"\x03" + qrels_json,
                 "results": b"\x04" + results_json(), "jsonl-run": b"\x05" + jsonl(runs),
                 "jsonl-qrels": b"\x06" + jsonl(qrels_rows), "queries": b"\x07" + queries,
                 "csv-run": b"\x08" + table_text(runs, ","),
                 "csv-qrels": b"\x09" + table_text(qrows, ","),
                 "tsv-run": b"\x0a" + table_text(runs, "\t"),
                 "tsv-qrels": b"\x0b" + table_text(qrels_rows, "\t"),
                 "corrupt": b"\x10" + RUN, "truncated": b"\x20" + RUN,
                 "garbage": b"\x30" + RUN},
    }
    return out


def main() -> None:
    for target, files in seeds().items():
        folder = CORPUS / target
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
    from fuzz_cli import seeds as cli_seeds  # built from the target's own input layout
    folder = CORPUS / "cli"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, data in cli_seeds().items():
        (folder / name).write_bytes(data)
    for folder in sorted(CORPUS.iterdir()):
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(f"{folder.name}: {len(list(folder.iterdir()))} seeds, {size:,} bytes")


if __name__ == "__main__":
    main()
