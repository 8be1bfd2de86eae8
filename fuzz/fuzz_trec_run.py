"""Fuzz target: TREC runs (``qid Q0 skill rank score tag``) through ``open_run`` / ``evaluate``.

Input: one selector byte, then the file's content. The selector picks the file name (by
extension, or an unknown one with ``fmt="trec"`` forced), the block size (small blocks reach
the block cutting and the query-grouping logic that an 8 MiB block never does on a 64 KB
input), how the run is consumed (``read()``, ``chunks()``, ``evaluate``), and the rank column.
"""

import atheris

with atheris.instrument_imports():
    import _harness

NAMES = [("run.trec", None), ("run.run", None), ("run.txt", None), ("run.res", None),
         ("run.dat", "trec"), ("run", "trec"), ("run.json", "trec"), ("run.csv", "trec")]
BLOCKS = [8 << 20, 64, 512, 4096]
HOW = ["read", "chunks", "evaluate"]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    s, content = data[0], data[1:]
    name, fmt = NAMES[s % 8]
    path = _harness.write(name, content)
    options = {"fmt": fmt, "block_size": BLOCKS[(s >> 3) % 4], "with_rank": bool(s & 0x80)}
    how = HOW[(s >> 5) % 3]
    _harness.library(lambda: _harness.read_run(path, how=how, **options))


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
