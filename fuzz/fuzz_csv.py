"""Fuzz target: CSV and TSV with a header line, runs and qrels.

Input: one selector byte, then the file's content. The selector picks run or qrels, comma or
tab (by extension, or forced with ``fmt``), column names, and how a run is consumed.
"""

import atheris

with atheris.instrument_imports():
    import _harness

NAMES = [("x.csv", None), ("x.tsv", None), ("x.dat", "csv"), ("x.txt", "tsv")]
RUN_COLUMNS = [None, {"query": "qid", "skill": "docno", "score": "sim"}, {"rank": "rank"},
               {"query": "query_id", "skill": "skill_id", "score": "score", "rank": "r"}]
QRELS_COLUMNS = [None, {"query": "qid", "skill": "docno", "relevance": "rel"}]
HOW = ["read", "chunks", "evaluate"]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    s, content = data[0], data[1:]
    name, fmt = NAMES[(s >> 1) % 4]
    if s & 1:
        path = _harness.write("qrels-" + name, content)
        columns = QRELS_COLUMNS[(s >> 3) % 2]
        work = lambda: _harness.read_qrels(path, evaluate=bool(s & 0x10), fmt=fmt,  # noqa: E731
                                           columns=columns)
    else:
        path = _harness.write("run-" + name, content)
        columns = RUN_COLUMNS[(s >> 3) % 4]
        how = HOW[(s >> 5) % 3]
        work = lambda: _harness.read_run(path, how=how, fmt=fmt, columns=columns)  # noqa: E731
    _harness.library(work)


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
