"""Strict values and bounded reading: what the readers refuse, and the limits that keep memory
bounded (results per query, line length), a file that shrinks while it is read."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skillret
from skillret.errors import InputError
from skillret.io.readers import open_run, read_qrels
from skillret.io import text

RUN = "q1 Q0 A 1 2.0 r\nq1 Q0 B 2 1.0 r\nq2 Q0 A 1 1.0 r\n"
QRELS = "q1 0 A 1\nq2 0 A 2\n"


@pytest.mark.parametrize("name, content, message", [
    ("qrels.csv", "query_id,skill_id,relevance\n", "qrels.csv: holds no judgments"),
    ("qrels.tsv", "query_id\tskill_id\trelevance\n\n", "qrels.tsv: holds no judgments"),
    ("qrels.csv", "query_id,skill_id,relevance\nq1,A,1\nq1,B,1e30\n",
     "qrels.csv:3: grade 1e+30 is out of range"),
    ("qrels.csv", "query_id,skill_id,relevance\nq1,A,1.5\n", "qrels.csv:2: grade 1.5 is not an "
                                                             "integer"),
    ("qrels.csv", "query_id,skill_id,relevance\nq1,A,true\n", "qrels.csv:2: grade 'true' is not "
                                                              "a number"),
    ("qrels.txt", "q1 0 A 1\nq1 0 B 1e30\n", "qrels.txt:2: grade 1e+30 is out of range"),
    ("qrels.txt", "q1 0 A 2147483648\n", "qrels.txt:1: grade 2147483648 is out of range"),
    ("qrels.txt", "q1 0 A -2147483649\n", "qrels.txt:1: grade -2147483649 is out of range"),
])
def test_grades_are_integers_in_range_and_qrels_hold_a_judgment(tmp_path, name, content,
                                                                message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    assert str(caught.value).startswith(str(tmp_path / message)), str(caught.value)


def test_grades_at_the_ends_of_the_range_are_fine(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 A 2147483647\nq1 0 B -2147483648\nq1 0 C 1.0\n")
    assert sorted(read_qrels(path).relevance.tolist()) == [-2147483648, 1, 2147483647]


def test_booleans_are_not_scores_or_grades(tmp_path):
    with pytest.raises(InputError, match="boolean"):
        skillret.evaluate({"q1": {"A": 1}}, {"q1": {"A": True}})
    with pytest.raises(InputError, match="boolean"):
        skillret.evaluate({"q1": {"A": True}}, {"q1": {"A": 1.0}})
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query_id": ["q1"], "skill_id": ["A"], "score": [True]}), path)
    with pytest.raises(InputError, match="must hold numbers, not bool"):
        open_run(path).read()


def _endless_query(path: Path, rows: int) -> None:
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(b"".join(b"q1 Q0 s%d 1 1.0 r\n" % i for i in range(rows)))


def test_results_per_query_are_capped(tmp_path):
    run = tmp_path / "run.trec.gz"
    _endless_query(run, 2_000)
    (tmp_path / "qrels.txt").write_text("q1 0 s999 1\n")  # first by the tie rule
    with pytest.raises(InputError, match=r"run.trec.gz:1001: query 'q1' has more than 1,000 "
                                         r"results \(raise the limit"):
        skillret.score(tmp_path / "qrels.txt", open_run(run, block_size=256), "official",
                       max_results_per_query=1_000)
    # The same cap applies to a run read whole, and to validation.
    with pytest.raises(InputError, match="query 'q1' has more than 1,000 results"):
        skillret.score(tmp_path / "qrels.txt", open_run(run).read(), max_results_per_query=1_000)
    with pytest.raises(InputError, match="query 'q1' has more than 1,000 results"):
        skillret.validate(tmp_path / "qrels.txt", run, max_results_per_query=1_000)
    assert skillret.score(tmp_path / "qrels.txt", run).metrics["official"]["Recall@5"] == 1.0
    # The limit in force (skillret.limits), and the CLI's option.
    with skillret.limits.applied(results_per_query=1_500):
        with pytest.raises(InputError, match="query 'q1' has more than 1,500 results"):
            skillret.score(tmp_path / "qrels.txt", run)
    for command in ("score", "validate"):
        result = subprocess.run([sys.executable, "-m", "skillret.cli", command, "--qrels",
                                 "qrels.txt", "--run", run.name, "--max-results-per-query", "999"],
                                cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == 2
        assert result.stderr.startswith("skillret-eval: error: run.trec.gz:1000: query 'q1' has "
                                        "more than 999 results"), result.stderr


def _score_in_bounds(tmp_path: Path, run: str, limit_kib: int | None) -> tuple:
    """``skillret-eval score`` of ``run`` in a process under an address-space limit (None: no
    limit): its exit status, stderr, and its peak address space and resident memory in KiB."""
    code = ("import resource, sys\n"
            f"limit = {limit_kib!r}\n"
            "if limit: resource.setrlimit(resource.RLIMIT_AS, (limit * 1024, limit * 1024))\n"
            "from skillret import cli\n"
            "try:\n"
            f"    status = cli.main(['score', '--qrels', 'qrels.txt', '--run', {run!r}, '-q'])\n"
            "finally:\n"
            "    fields = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
            "    open('peak.txt', 'w').write(fields['VmPeak'].split()[0] + ' '\n"
            "                                + fields['VmHWM'].split()[0])\n"
            "raise SystemExit(status)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    peak, resident = map(int, (tmp_path / "peak.txt").read_text().split())
    return result.returncode, result.stderr, peak, resident


@pytest.mark.slow   # 1.6 GB decompressed: the slow tier
def test_a_compressed_bomb_with_one_endless_query_stops_within_bounded_memory(tmp_path):
    """A few MB of gzip holding ~1.6 GB of one query's lines: one line on stderr, exit 2, in
    the address space a benign run of a few blocks takes plus 600 MB, and under 600 MB resident.

    The limit is relative: a process with numpy and pyarrow (their allocators reserve address
    space up front, and so does each thread's malloc arena) maps 1.6 to 1.8 GB whatever it
    reads, so a fixed limit measures the machine's allocators rather than the reader."""
    (tmp_path / "qrels.txt").write_text("q1 0 x 1\n")
    with gzip.open(tmp_path / "benign.trec.gz", "wb") as out:  # 20 MB: 3 blocks, 2 parsers
        for q in range(7_000):
            out.write(b"".join(b"q%d Q0 skill-%05d %d 1.0 r\n" % (q, i, i + 1)
                               for i in range(100)))
    status, stderr, benign, _ = _score_in_bounds(tmp_path, "benign.trec.gz", None)
    assert status == 0, stderr
    run = tmp_path / "bomb.trec.gz"
    line = b"q1 Q0 the-same-skill-id-every-time 1 1.0 r\n"
    with gzip.open(run, "wb", compresslevel=9) as out:
        block = line * 100_000
        for _ in range(360):  # about 1.6 GB uncompressed
            out.write(block)
    assert run.stat().st_size < 20 << 20
    status, stderr, _, resident = _score_in_bounds(tmp_path, run.name, benign + 600_000)
    assert status == 2, stderr
    assert stderr.strip().splitlines() == [
        "skillret-eval: error: bomb.trec.gz:100001: query 'q1' has more than 100,000 results "
        "(raise the limit with --max-results-per-query (library: max_results_per_query=) if "
        "the run is meant to be this deep)"]
    assert resident < 600_000, resident


def test_a_line_without_end_in_a_compressed_file_stops_at_the_line_limit(tmp_path):
    run = tmp_path / "blank.trec.gz"
    with gzip.open(run, "wb", compresslevel=9) as out:
        out.write(b"q1 Q0 A 1 1.0 r\n")
        for _ in range(200):
            out.write(b" " * (1 << 20))
    with pytest.raises(InputError, match=r"blank.trec.gz:2: has a line longer than 1,048,576 "
                                         r"bytes"):
        open_run(run).read()


@pytest.mark.parametrize("how", ["between-blocks", "from-a-thread"])
def test_a_file_that_shrinks_while_read_ends_in_one_error(tmp_path, how):
    """No memory map, so no SIGBUS: a run cut short while it is read is refused with one line."""
    path = tmp_path / "run.trec"
    path.write_bytes(b"".join(b"q%05d Q0 s%d %d 1.0 r\n" % (i // 10, i % 10, i % 10 + 1)
                              for i in range(50_000)))
    batches = text.run_batches(path, block_size=4096)
    next(batches)
    if how == "between-blocks":
        os.truncate(path, 100_000)
    else:
        worker = threading.Thread(target=os.truncate, args=(path, 100_000))
        worker.start()
        worker.join()
    with pytest.raises(InputError, match="run.trec: changed while it was read"):
        list(batches)


def test_a_file_that_grows_while_read_ends_in_one_error(tmp_path):
    """Blocks are sized to what is left of the file, plus a byte: a file that grows past the
    size it had when reading began is still noticed."""
    path = tmp_path / "run.trec"
    path.write_bytes(b"".join(b"q%05d Q0 s%d %d 1.0 r\n" % (i // 10, i % 10, i % 10 + 1)
                              for i in range(50_000)))
    batches = text.run_batches(path, block_size=4096)
    next(batches)
    with open(path, "ab") as fh:
        fh.write(b"q99999 Q0 s1 1 1.0 r\n")
    with pytest.raises(InputError, match="run.trec: changed while it was read"):
        list(batches)


def test_a_small_file_is_read_without_a_whole_block(tmp_path):
    """A file smaller than a block gets a buffer of its own size: zeroing 8 MB (and the read
    that finds the end) cost a small file's process thousands of page faults."""
    import tracemalloc

    from skillret.io.text import blocks

    path = tmp_path / "run.trec"
    path.write_bytes(b"q1 Q0 s1 1 1.0 r\nq1 Q0 s2 2 0.5 r\n")
    tracemalloc.start()
    try:
        got = [bytes(block) for block, _ in blocks(path, block_size=8 << 20)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert b"".join(got) == path.read_bytes()
    assert peak < 1 << 20


def test_a_file_truncated_while_the_cli_reads_it_ends_in_one_line(tmp_path):
    """The same through the CLI in another process: whatever the moment of the cut, the process
    ends with status 0 (the cut came after reading), or 2 and one line, never a signal."""
    run = tmp_path / "run.trec"
    run.write_bytes(b"".join(b"q%06d Q0 s%d %d 1.0 r\n" % (i // 10, i % 10, i % 10 + 1)
                             for i in range(2_000_000)))
    (tmp_path / "qrels.txt").write_text("q000001 0 s1 1\n")
    proc = subprocess.Popen([sys.executable, "-m", "skillret.cli", "validate", "--qrels",
                             "qrels.txt", "--run", "run.trec"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.truncate(run, 1_000_000)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode in (0, 2), stderr
    if proc.returncode == 2:
        assert len(stderr.strip().splitlines()) == 1 and "run.trec" in stderr, stderr
