"""Fuzz target: gzip of every text format (TREC run and qrels, JSON, SkillRet results, JSON lines,
SkillRet queries, CSV, TSV), through ``open_run`` / ``read_qrels`` / ``evaluate``.

Input: one selector byte, then the text. The low four bits pick the format (and the file name,
``NAME.EXT.gz``); bits 4-5 the damage: none, one byte of the compressed stream flipped (a
corrupt deflate stream or checksum), the compressed stream cut in half, or the text itself after
a gzip magic number (not a gzip stream); bit 6: a name without ``.gz`` (found by
its magic number) and the format forced; bit 7: a 1 KiB input cap (the decompression bomb
path).
"""

import gzip

import atheris

with atheris.instrument_imports():
    import _harness

# (kind, file name, forced format)
FORMATS = [("run", "run.trec", "trec"), ("qrels", "qrels.qrels", "trec"),
           ("run", "run.json", "json"), ("qrels", "qrels.json", "json"),
           ("run", "results.json", "skillret-json"), ("run", "run.jsonl", "jsonl"),
           ("qrels", "qrels.jsonl", "jsonl"), ("qrels", "queries.jsonl", "queries-jsonl"),
           ("run", "run.csv", "csv"), ("qrels", "qrels.csv", "csv"),
           ("run", "run.tsv", "tsv"), ("qrels", "qrels.tsv", "tsv"),
           ("run", "run.txt", "trec"), ("qrels", "qrels.txt", "trec"),
           ("run", "run.ndjson", "jsonl"), ("qrels", "qrels.ndjson", "jsonl")]
HOW = ["read", "chunks", "evaluate"]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    from skillret import limits

    s, text = data[0], data[1:]
    kind, name, fmt = FORMATS[s & 15]
    damage = (s >> 4) & 3
    if damage == 3:
        content = b"\x1f\x8b" + text
    else:
        content = gzip.compress(text, compresslevel=1, mtime=0)
        if damage == 1:
            at = 10 + sum(text[:8]) % max(1, len(content) - 10)
            content = content[:at] + bytes([content[at] ^ 0xFF]) + content[at + 1:]
        elif damage == 2:
            content = content[: len(content) // 2]
    if s & 0x40:
        name = name.rsplit(".", 1)[0] + ".dat"
    else:
        name, fmt = name + ".gz", None
    path = _harness.write(name, content)
    if kind == "qrels":
        work = lambda: _harness.read_qrels(path, evaluate=bool(s & 0x20), fmt=fmt)  # noqa: E731
    else:
        how = HOW[len(text) % 3]
        work = lambda: _harness.read_run(path, how=how, fmt=fmt)  # noqa: E731
    with limits.applied(input_bytes=1024 if s & 0x80 else None):
        _harness.library(work)


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
