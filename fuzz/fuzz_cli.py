"""Fuzz target: the CLI's argument handling, ``skillret.cli.main(argv)``, with the files it names.

Input: sections separated by the byte 0x1E. The first is the command line (split at
whitespace); each other section is a file for it: its first line is the file's name, the rest
its content (``NAME.gz``: the content is gzipped; ``NAME.parquet``: the content is read as CSV
and written as Parquet, or kept as it is when it is not CSV). For example::

    score --qrels q.qrels --run r.trec --profile mia5150 0x1E q.qrels
    q1 0 s1 1
    0x1E r.trec
    q1 Q0 s1 1 2.5 t

Every input runs in a new empty directory (the current directory while the command runs): a
token holding ``/`` or starting with ``..`` has them replaced, so nothing is read or written
outside it. ``fuzz/cli.dict`` gives libFuzzer the commands' option names (``-dict=``).
"""

import atheris

with atheris.instrument_imports():
    import _harness

SEP = b"\x1e"


def _safe(token: str) -> str:
    """No way out of the directory; no NUL (an argument or file name cannot hold one)."""
    token = token.replace("/", "_").replace("\\", "_").replace("\x00", "_")
    return "_" + token[2:] if token.startswith("..") else token


def _files(sections: list[bytes], cwd) -> None:
    import gzip
    for section in sections:
        name, _, content = section.partition(b"\n")
        name = _safe(name.decode("utf-8", "replace").strip())
        if not name or name in (".", "_") or len(name) > 100:
            continue
        if name.endswith(".gz"):
            content = gzip.compress(content, mtime=0)
        elif name.endswith((".parquet", ".pq")):
            content = _parquet(content)
        try:
            (cwd / name).write_bytes(content)
        except (OSError, ValueError):  # a name the file system refuses
            continue


def _parquet(content: bytes) -> bytes:
    import io
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    try:
        table = pacsv.read_csv(io.BytesIO(content))
        sink = io.BytesIO()
        pq.write_table(table, sink)
        return sink.getvalue()
    except (pa.ArrowException, ValueError, TypeError):
        return content


def test_one_input(data: bytes) -> None:
    sections = data.split(SEP)
    argv = [_safe(t) for t in sections[0].decode("utf-8", "replace").split()]
    cwd = _harness.fresh_dir("cli")
    _files(sections[1:], cwd)
    _harness.cli(argv[:40], cwd)


def seeds() -> dict[str, bytes]:
    """Seed inputs (``make_corpus.py`` writes them to ``corpus/cli``)."""
    qrels = b"q.qrels\nq1 0 s1 1\nq1 0 s2 2\nq2 0 s3 1\n"
    run = b"r.trec\nq1 Q0 s1 1 2.5 t\nq1 Q0 s3 2 1.5 t\nq2 Q0 s3 1 0.5 t\n"
    run2 = b"b.trec\nq1 Q0 s2 1 2.5 u\nq2 Q0 s1 1 0.5 u\n"
    csv_run = b"c.parquet\nquery_id,skill_id,score\nq1,s1,1.0\nq2,s3,0.5\n"
    params = (b"params.yaml\neval:\n  profiles: [official, mine]\n  relevance_level: 1\n"
              b"  define:\n    mine:\n      metrics: [NDCG@3, P@2]\n"
              b"runs:\n  r: r.trec\n  b: b.trec\nrun_options:\n  r: {format: trec}\n"
              b"fuse:\n  both: {method: rrf, runs: [r, b], k: 10}\n")
    facets = b"f.jsonl\n{\"id\": \"q1\", \"kind\": \"a\"}\n{\"id\": \"q2\", \"kind\": \"b\"}\n"

    def seed(argv: str, *files: bytes) -> bytes:
        return SEP.join([argv.encode()] + list(files))

    return {
        "score": seed("score --qrels q.qrels --run r.trec", qrels, run),
        "score-all": seed("score --qrels q.qrels --run r.trec --profile mia5150 --profile "
                          "recommended -o m.json --per-query pq.tsv --relevance-level 2 -q",
                          qrels, run),
        "score-params": seed("score --qrels q.qrels --run r.trec --params params.yaml",
                             qrels, run, params),
        "score-breakdown": seed("score --qrels q.qrels --run r.trec --breakdown kind --facets "
                                "f.jsonl --breakdown n_relevant", qrels, run, facets),
        "score-limits": seed("score --qrels q.qrels --run r.trec --max-input-size 1K "
                             "--max-json-depth 3 --max-results-per-query 1", qrels, run),
        "score-parquet": seed("score --qrels q.qrels --run c.parquet --format parquet "
                              "--columns query=query_id,skill=skill_id,score=score",
                              qrels, csv_run),
        "validate": seed("validate --qrels q.qrels --run r.trec --strict --report v.json "
                         "--normalized n.parquet --depth 10", qrels, run),
        "fuse": seed("fuse --run r.trec --run b=b.trec --method combsum --norm zscore "
                     "--weight b=2 --depth 5 -o f.trec", run, run2),
        "fuse-params": seed("fuse --params params.yaml --name both --run-pattern {}.trec "
                            "-o f.json", params, run, run2),
        "compare": seed("compare --qrels q.qrels --run r.trec --run b.trec --permutations 50 "
                        "--bootstrap 20 --correction bh -o c.json --markdown c.md",
                        qrels, run, run2),
        "compare-rev": seed("compare --rev HEAD --repo .", params),
        "profiles": seed("profiles --params params.yaml --json", params),
        "normalize": seed("normalize-qrels --qrels q.qrels -o n.tsv --stats s.json", qrels),
        "register": seed("register r.trec b.trec --params params.yaml", params, run, run2),
        "register-name": seed("register r.trec --name x --format trec --columns a,b,c "
                              "--split test", run, params),
        "help": seed("--help"),
    }


if __name__ == "__main__":
    _harness.setup()
    _harness.main(test_one_input)
