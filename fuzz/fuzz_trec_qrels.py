"""Fuzz target: TREC qrels (``qid iter skill grade``) through ``read_qrels`` / ``evaluate``.

Input: one selector byte, then the file's content. The selector picks the file name (by
extension, or an unknown one with ``fmt="trec"`` forced) and whether the qrels are then used to
score a fixed run.
"""

import atheris

with atheris.instrument_imports():
    import _harness

NAMES = [("qrels.qrels", None), ("qrels.txt", None), ("qrels.trec", None), ("qrels", None),
         ("qrels.dat", "trec"), ("qrels.tsv", "trec"), ("qrels.json", "trec"),
         ("qrels.res", None)]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    s, content = data[0], data[1:]
    name, fmt = NAMES[s % 8]
    path = _harness.write(name, content)
    _harness.library(lambda: _harness.read_qrels(path, evaluate=bool(s & 8), fmt=fmt))


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
