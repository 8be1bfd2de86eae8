"""Fuzz target: JSON lines: run and qrels rows, and SkillRet's queries JSONL (``labels``,
``skill_ids``).

Input: one selector byte, then the file's content. The selector picks run or qrels, the file
name, the format (detected, ``jsonl`` or ``queries-jsonl`` forced), column names, and how a run
is consumed.
"""

import atheris

with atheris.instrument_imports():
    import _harness

RUN = [("run.jsonl", None), ("run.ndjson", None), ("run.dat", "jsonl"), ("run", None)]
QRELS = [("qrels.jsonl", None), ("qrels.ndjson", None), ("qrels.jsonl", "queries-jsonl"),
         ("qrels.dat", "jsonl"), ("qrels", None), ("qrels.json", "queries-jsonl"),
         ("queries.jsonl", "jsonl"), ("qrels.txt", None)]
RUN_COLUMNS = [None, {"query": "qid", "skill": "docno", "score": "sim"}, {"rank": "rank"}]
QRELS_COLUMNS = [None, {"query": "qid", "skill": "docno", "relevance": "rel"}]
HOW = ["read", "chunks", "evaluate"]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    s, content = data[0], data[1:]
    if s & 1:
        name, fmt = QRELS[(s >> 1) % 8]
        path = _harness.write(name, content)
        columns = QRELS_COLUMNS[(s >> 4) % 2]
        work = lambda: _harness.read_qrels(path, evaluate=bool(s & 0x20), fmt=fmt,  # noqa: E731
                                           columns=columns)
    else:
        name, fmt = RUN[(s >> 1) % 4]
        path = _harness.write(name, content)
        columns = RUN_COLUMNS[(s >> 3) % 3]
        how = HOW[(s >> 5) % 3]
        work = lambda: _harness.read_run(path, how=how, fmt=fmt, columns=columns)  # noqa: E731
    _harness.library(work)


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
