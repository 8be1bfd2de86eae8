"""Compressed bombs under a memory limit: a few MB of gzip that expand to GBs end in one line
naming the file, not in an out-of-memory kill or a MemoryError.

Each command runs in a subprocess under ``ulimit -v`` (address space). A process that has
imported numpy and pyarrow already maps about 1.4 GB, so the limits below leave room for the
input cap (1 GiB by default) and little more: a reader that held the whole expansion would fail.
"""

from __future__ import annotations

import gzip
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from skillret.limits import MAX_INPUT_BYTES

QRELS = "q1 0 A 1\nq2 0 D 2\n"
RUN = "q1 Q0 A 1 5.0 r\nq2 Q0 D 1 1.0 r\n"
BLOCK = 64 << 20


def bomb(path: Path, head: bytes, total: int, fill: bytes = b" ") -> Path:
    """``head`` then ``fill`` repeated to ``total`` bytes once decompressed: gzip members of
    64 MiB each, concatenated (what gzip -d and Python read as one stream)."""
    member = gzip.compress(fill * (BLOCK // len(fill)), compresslevel=9)
    with open(path, "wb") as out:
        out.write(gzip.compress(head))
        for _ in range(-(-total // BLOCK)):
            out.write(member)
    return path


def limited(args: list, cwd: Path, vmem_kib: int) -> subprocess.CompletedProcess:
    command = " ".join(shlex.quote(str(a)) for a in [sys.executable, "-m", "skillret.cli", *args])
    return subprocess.run(["bash", "-c", f"ulimit -v {vmem_kib} && exec {command}"],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return tmp_path


def test_the_memory_limit_leaves_room_for_a_normal_run(files):
    result = limited(["score", "--qrels", "qrels.txt", "--run", "run.trec", "-q"], files,
                     2_200_000)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow   # GBs decompressed: the slow tier
def test_json_bomb_stops_at_the_default_cap(files):
    """1.5 GiB of blanks after a JSON object's start, under 3 GB of address space."""
    bomb(files / "run.json.gz", b'{"q1": {"A": 1.0}', MAX_INPUT_BYTES + (512 << 20))
    assert (files / "run.json.gz").stat().st_size < 4 << 20
    result = limited(["score", "--qrels", "qrels.txt", "--run", "run.json.gz", "-q",
                      "-o", "out.json"], files, 3_000_000)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "skillret-eval: error: run.json.gz: is larger than 1G once decompressed (raise the "
        "limit with --max-input-size, or give the run as TREC or Parquet, which are streamed)"]
    assert not (files / "out.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name, head, role", [
    ("run.jsonl.gz", b'{"query_id": "q1", "skill_id": "A", "score": 1.0}\n', "run"),
    ("run.csv.gz", b"query_id,skill_id,score\nq1,A,1.0\n", "run"),
    ("qrels.csv.gz", b"query_id,skill_id,relevance\nq1,A,1\n", "qrels"),
    ("queries.jsonl.gz", b'{"id": "q1", "skill_ids": ["A"]}\n', "qrels"),
])
def test_row_file_bombs_stop_at_the_cap(files, name, head, role):
    """Blank lines by the GB; the cap lowered by the option, the address space to 2.2 GB."""
    bomb(files / name, head, 1 << 30, fill=b" \n")
    inputs = (["--qrels", "qrels.txt", "--run", name] if role == "run"
              else ["--qrels", name, "--run", "run.trec"])
    result = limited(["score", *inputs, "-q", "--max-input-size", "256M"], files, 2_200_000)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"skillret-eval: error: {name}: is larger than 256M once decompressed (raise the "
        "limit with --max-input-size, or give the run as TREC or Parquet, which are streamed)"]


@pytest.mark.slow
def test_deep_json_bomb(files):
    """Nesting by the million, compressed: refused by the depth scan, not the stack."""
    path = files / "run.json.gz"
    path.write_bytes(gzip.compress(b'{"q1": ' + b"[" * 5_000_000 + b"]" * 5_000_000 + b"}"))
    result = limited(["score", "--qrels", "qrels.txt", "--run", path.name, "-q"], files,
                     2_200_000)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("skillret-eval: error: run.json.gz:1: JSON nested deeper "
                                    "than 64 levels")
