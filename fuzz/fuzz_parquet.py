"""Fuzz target: Parquet runs and qrels, through ``open_run`` / ``read_qrels`` / ``evaluate``.

Input: one selector byte, then the rest. Selector bit 0: qrels (else a run); bit 1: the rest
*is* the file (mutated Parquet bytes: corrupt footers, pages, schemas); else the rest describes
a table that is built with pyarrow and written as a valid Parquet file (column names from the
names the readers look for, column types of every kind, nulls, dictionaries, duplicate names,
several row groups): the readers' handling of well-formed files of the wrong shape. Bit 2:
``.dat`` with ``fmt="parquet"`` forced; bits 3-4: how a run is consumed; bit 5: evaluate qrels.
"""

import io

import atheris

with atheris.instrument_imports():
    import _harness

NAMES = ["query_id", "skill_id", "score", "relevance", "rank", "qid", "docno", "sim", "grade",
         "label", "doc_id", "topic", "x", ""]
HOW = ["read", "chunks", "evaluate", "read"]


def _column(fdp, pa, rows: int):
    kind = fdp.ConsumeIntInRange(0, 11)
    nulls = fdp.ConsumeBool()

    def maybe(values):
        if not nulls:
            return values
        return [None if fdp.ConsumeIntInRange(0, 3) == 0 else v for v in values]

    def text():
        return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 6))

    if kind == 0:
        return pa.array(maybe([text() for _ in range(rows)]), pa.string())
    if kind == 1:
        return pa.array(maybe([text() for _ in range(rows)]), pa.large_string())
    if kind == 2:
        return pa.array(maybe([text() for _ in range(rows)]), pa.string()).dictionary_encode()
    if kind == 3:
        return pa.array(maybe([fdp.ConsumeInt(8) for _ in range(rows)]), pa.int64())
    if kind == 4:
        return pa.array(maybe([fdp.ConsumeIntInRange(0, 255) for _ in range(rows)]), pa.uint8())
    if kind == 5:
        return pa.array(maybe([fdp.ConsumeUInt(8) for _ in range(rows)]), pa.uint64())
    if kind == 6:
        return pa.array(maybe([fdp.ConsumeRegularFloat() for _ in range(rows)]), pa.float64())
    if kind == 7:
        specials = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e308, 5e-324, 1.5]
        return pa.array(maybe([fdp.PickValueInList(specials) for _ in range(rows)]),
                        pa.float32() if fdp.ConsumeBool() else pa.float64())
    if kind == 8:
        return pa.array(maybe([fdp.ConsumeBool() for _ in range(rows)]), pa.bool_())
    if kind == 9:
        return pa.array(maybe([fdp.ConsumeBytes(3) for _ in range(rows)]), pa.binary())
    if kind == 10:
        return pa.array(maybe([[fdp.ConsumeIntInRange(0, 3)] for _ in range(rows)]),
                        pa.list_(pa.int32()))
    return pa.nulls(rows)


def _built(content: bytes) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    fdp = atheris.FuzzedDataProvider(content)
    rows = fdp.ConsumeIntInRange(0, 40)
    names, arrays = [], []
    for _ in range(fdp.ConsumeIntInRange(0, 5)):
        names.append(fdp.PickValueInList(NAMES))
        arrays.append(_column(fdp, pa, rows))
    table = pa.Table.from_arrays(arrays, names=names) if arrays else pa.table({})
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=max(1, fdp.ConsumeIntInRange(0, rows)))
    return sink.getvalue()


def test_one_input(data: bytes) -> None:
    if not data:
        return
    s, content = data[0], data[1:]
    if not s & 2:
        content = _built(content)
    name, fmt = ("x.dat", "parquet") if s & 4 else ("x.parquet", None)
    if s & 1:
        path = _harness.write("qrels-" + name, content)
        work = lambda: _harness.read_qrels(path, evaluate=bool(s & 0x20), fmt=fmt)  # noqa: E731
    else:
        path = _harness.write("run-" + name, content)
        how = HOW[(s >> 3) % 4]
        work = lambda: _harness.read_run(path, how=how, fmt=fmt,  # noqa: E731
                                         with_rank=bool(s & 0x40))
    _harness.library(work)


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
