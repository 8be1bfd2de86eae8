"""Outputs under faults: sets that appear whole or not at all, a full disk, a read-only place,
concurrent writers, writers killed mid-write, a standard output closed early.

Real processes and real file systems: the full disk and the read-only directory are small tmpfs
mounts (the tests run as root; they skip, with the reason, where mounting is not permitted).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import cli_server
import pyarrow as pa
import pytest
from budget import repeats

from skillret.io.atomic import OutputSet, atomic_path, reserve, write_json, write_text
from skillret.errors import OutputError

ROOT = Path(__file__).resolve().parents[2]
QRELS = "q1 0 A 1\nq1 0 B 1\nq2 0 D 2\n"
RUN = "q1 Q0 A 1 5.0 r\nq1 Q0 X 2 4.0 r\nq2 Q0 D 1 1.0 r\n"


def cli(*args, cwd=None):
    """``python -m skillret.cli ARGS`` in a process of its own (forked: tests/cli_server.py)."""
    return cli_server.run(*args, cwd=cwd)


def temps(directory: Path) -> list[Path]:
    return sorted(directory.glob(".*.tmp"))


def one_error_line(result, *fragments: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("skillret-eval: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return tmp_path


def big_inputs(directory: Path, queries: int = 3000) -> tuple[Path, Path]:
    """Inputs whose per-query table is far larger than 64 KiB."""
    qrels = directory / "big_qrels.txt"
    run = directory / "big_run.trec"
    qrels.write_text("".join(f"query-{i:06d} 0 S{i} 1\n" for i in range(queries)))
    run.write_text("".join(f"query-{i:06d} Q0 S{i} 1 1.0 r\n" for i in range(queries)))
    return qrels, run


@contextlib.contextmanager
def tmpfs(directory: Path, size: str = "64k"):
    """A small tmpfs at ``directory``, always unmounted afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                             str(directory)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip() or 'mount failed'}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True)


# ---------------------------------------------------------------------- sets: all or nothing
def test_score_outputs_appear_together_or_not_at_all(files):
    """The per-query table cannot be written (a query id holds a tab): the metrics file, which
    would have been written first, keeps its old content."""
    (files / "run.json").write_text(json.dumps({"q\t1": {"A": 1.0}, "q2": {"D": 1.0}}))
    (files / "qrels.json").write_text(json.dumps({"q\t1": {"A": 1}, "q2": {"D": 1}}))
    out, pq = files / "out.json", files / "pq.tsv"
    out.write_text("old\n")
    result = cli("score", "--qrels", files / "qrels.json", "--run", files / "run.json", "-q",
                 "-o", out, "--per-query", pq)
    one_error_line(result, "pq.tsv")
    assert out.read_text() == "old\n" and not pq.exists()
    assert temps(files) == []
    # the same command with a Parquet table succeeds and writes both
    result = cli("score", "--qrels", files / "qrels.json", "--run", files / "run.json", "-q",
                 "-o", out, "--per-query", files / "pq.parquet")
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["official"] and (files / "pq.parquet").exists()


@pytest.mark.parametrize("bad", ["directory", "parent-file"])
def test_an_unwritable_output_fails_before_any_work_and_changes_nothing(files, bad):
    out = files / "out.json"
    out.write_text("old\n")
    if bad == "directory":
        per_query = files / "pq"
        per_query.mkdir()
        expected = "pq: cannot write (it is a directory)"
    else:
        per_query = files / "run.trec" / "pq.tsv"
        expected = "run.trec is not a directory"
    result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec", "-q",
                 "-o", out, "--per-query", per_query)
    one_error_line(result, expected)
    assert out.read_text() == "old\n"
    assert temps(files) == []


def test_validate_report_and_normalized_run_are_one_set(files):
    report = files / "report.json"
    report.write_text("old\n")
    normalized = files / "canonical"
    normalized.mkdir()
    result = cli("validate", "--qrels", files / "qrels.txt", "--run", files / "run.trec",
                 "--report", report, "--normalized", normalized)
    one_error_line(result, "canonical: cannot write")
    assert report.read_text() == "old\n" and temps(files) == []


def test_normalize_qrels_output_and_stats_are_one_set(files):
    out = files / "canonical.tsv"
    out.write_text("old\n")
    (files / "stats").mkdir()
    result = cli("normalize-qrels", "--qrels", files / "qrels.txt", "--output", out,
                 "--stats", files / "stats")
    one_error_line(result, "stats: cannot write (it is a directory)")
    assert out.read_text() == "old\n" and temps(files) == []


def test_a_failing_stage_changes_none_of_its_outputs(files):
    """The score stage writes five files; the last one's place is a directory."""
    (files / "params.yaml").write_text(
        "runs:\n  r: run.trec\nrun_options:\n  r: {}\neval:\n  profiles: [official]\n")
    qrels = files / "outputs" / "qrels.tsv"
    qrels.parent.mkdir()
    qrels.write_text("query_id\tskill_id\trelevance\n" + "".join(
        "\t".join(line.split()[::2][:1] + line.split()[2:4]) + "\n"
        for line in QRELS.splitlines()))
    outputs = [files / p for p in ("outputs/runs/r.parquet", "outputs/per_query/r.tsv",
                                   "metrics/runs/r.json", "reports/validation/r.json")]
    for path in outputs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("old\n")
    (files / "plots" / "runs" / "r.json").mkdir(parents=True)
    result = subprocess.run([sys.executable, "-m", "stages.score", "r"], capture_output=True,
                            text=True, cwd=files, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1:] == [
        "score@r: error: plots/runs/r.json: cannot write (it is a directory)"]
    assert all(path.read_text() == "old\n" for path in outputs)
    assert [temps(path.parent) for path in outputs] == [[]] * len(outputs)


def test_library_output_set(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "sub" / "b.txt"
    a.write_text("old\n")
    with pytest.raises(RuntimeError):
        with OutputSet():
            write_json(a, {"x": 1})
            write_text(b, "new\n")
            raise RuntimeError("fails after both were written")
    assert a.read_text() == "old\n" and not b.exists() and temps(tmp_path) == []
    with OutputSet() as out:
        write_json(a, {"x": 1})               # module writers join the enclosing set
        with atomic_path(b) as tmp:
            tmp.write_text("new\n")
        assert a.read_text() == "old\n" and not b.exists()   # nothing renamed yet
    assert json.loads(a.read_text()) == {"x": 1} and b.read_text() == "new\n"
    assert temps(tmp_path) == [] and temps(tmp_path / "sub") == []
    with pytest.raises(OutputError, match="it is a directory"):
        reserve(tmp_path / "sub")


# ---------------------------------------------------------------------- disks that fail
def test_full_disk_is_one_line_and_keeps_the_old_outputs(tmp_path):
    qrels, run = big_inputs(tmp_path)
    with tmpfs(tmp_path / "small") as disk:
        out = disk / "out.json"
        out.write_text("old\n")
        result = cli("score", "--qrels", qrels, "--run", run, "-q", "-o", out,
                     "--per-query", disk / "pq.tsv")
        one_error_line(result, "pq.tsv: cannot write (no space left on device)")
        assert out.read_text() == "old\n" and not (disk / "pq.tsv").exists()
        assert temps(disk) == []


def test_full_disk_while_writing_json(tmp_path):
    qrels, run = big_inputs(tmp_path, queries=400)
    with tmpfs(tmp_path / "small", size="8k") as disk:
        (disk / "filler").write_bytes(b"x" * 8192)
        result = cli("validate", "--qrels", qrels, "--run", run, "--report",
                     disk / "report.json", "--depth", "1")
        one_error_line(result, "report.json: cannot write (no space left on device)")
        assert not (disk / "report.json").exists() and temps(disk) == []


def test_read_only_directory(files):
    place = files / "ro"
    with tmpfs(place, size="1m"):
        (place / "out.json").write_text("old\n")
        remount = subprocess.run(["mount", "-o", "remount,ro", str(place)],
                                 capture_output=True, text=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
        result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec",
                     "-q", "-o", place / "out.json")
        one_error_line(result, "out.json: cannot write (read-only file system)")
        assert (place / "out.json").read_text() == "old\n"


# ---------------------------------------------------------------------- processes
def test_concurrent_writers_each_write_a_whole_file(files):
    runs = []
    for i in range(4):
        run = files / f"run{i}.trec"
        run.write_text(f"q1 Q0 A 1 5.0 r\nq1 Q0 X{i} 2 4.0 r\n" + "q2 Q0 D 1 1.0 r\n" * (i % 2))
        runs.append(run)
    out = files / "out.json"
    procs = [subprocess.Popen([sys.executable, "-m", "skillret.cli", "score", "--qrels",
                               str(files / "qrels.txt"), "--run", str(run), "-q", "-o",
                               str(out), "--per-query", str(files / "pq.tsv")],
                              stderr=subprocess.PIPE, text=True)
             for run in runs for _ in range(2)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
        proc.stderr.close()
    expected = set()
    for run in runs:
        alone = files / f"alone-{run.stem}.json"
        assert cli("score", "--qrels", files / "qrels.txt", "--run", run, "-q",
                   "-o", alone).returncode == 0
        expected.add(alone.read_text())
    assert out.read_text() in expected
    assert temps(files) == []


WRITER = textwrap.dedent("""
    import select, sys
    from skillret.io.atomic import OutputSet
    with OutputSet() as out:
        tmp = out.path(sys.argv[1])
        tmp.write_text("partial")
        print(tmp, flush=True)
        select.select([sys.stdin], [], [], float(sys.argv[2]))  # until released, or timed out
        tmp.write_text("new\\n")
""")


def start_writer(target: Path, seconds: float) -> tuple[subprocess.Popen, Path]:
    """A writer in mid-write: its temporary file exists; it finishes when released (a line on
    its stdin, or its stdin closed) or after ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(seconds)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    tmp = Path(proc.stdout.readline().strip())
    assert tmp.exists(), tmp
    return proc, tmp


def test_kill_9_mid_write_then_rerun(files):
    out = files / "out.json"
    out.write_text("old\n")
    proc, tmp = start_writer(out, 60)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stdin.close()
    assert out.read_text() == "old\n"
    assert tmp.exists() and tmp.name.startswith(".out.json.skillret-")
    result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec", "-q",
                 "-o", out)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["official"]
    assert temps(files) == [], "the next writer removes a dead writer's temporary file"


def test_a_live_writers_temporary_file_is_left_alone(files):
    out = files / "out.json"
    proc, tmp = start_writer(out, 60)   # alive until released below, however slow the machine
    try:
        result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec",
                     "-q", "-o", files / "other.json")
        assert result.returncode == 0, result.stderr
        assert proc.poll() is None, "the writer ended before the command ran"
        assert tmp.exists(), "a live writer's temporary file was removed"
    finally:
        proc.stdin.close()              # released: it finishes its write
        assert proc.wait(timeout=60) == 0
        proc.stdout.close()
    assert out.read_text() == "new\n" and temps(files) == []


def test_stdout_closed_early_exits_quietly_and_keeps_the_outputs(files):
    out = files / "out.json"
    script = (f"{sys.executable} -m skillret.cli score --qrels qrels.txt --run run.trec "
              f"-o out.json | head -c0; echo status=${{PIPESTATUS[0]}}")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=files,
                            timeout=120)
    assert result.stderr == ""
    assert result.stdout.strip() == f"status={128 + signal.SIGPIPE}"
    assert json.loads(out.read_text())["official"] and temps(files) == []


def test_stdout_closed_while_printing_a_long_table(files):
    """A closed pipe found in mid-output (not only at the final flush)."""
    (files / "params.yaml").write_text(
        "eval:\n  define:\n    wide: {metrics: [" + ", ".join(f"NDCG@{k}" for k in
                                                            range(1, 400)) + "]}\n")
    script = (f"{sys.executable} -m skillret.cli score --qrels qrels.txt --run run.trec "
              f"--params params.yaml --profile wide | (sleep 0.1; head -c1 >/dev/null); "
              f"echo status=${{PIPESTATUS[0]}}")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=files,
                            timeout=120)
    assert result.stderr == ""
    assert result.stdout.strip() in (f"status={128 + signal.SIGPIPE}", "status=0")


def test_stale_temporary_files_of_dead_writers_are_swept_once(tmp_path):
    """Many killed writers leave many files; one later write removes them all."""
    target = tmp_path / "out.json"
    writers = [start_writer(target, 60) for _ in range(3)]   # all alive: none sweeps another
    stale = [tmp for _, tmp in writers]
    for proc, _ in writers:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stdin.close()
    assert all(p.exists() for p in stale)
    code = ("from skillret.io.atomic import write_text; import sys; "
            "write_text(sys.argv[1], 'done\\n')")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "another.txt")], check=True)
    assert temps(tmp_path) == [] and not target.exists()


def test_a_device_target_is_written_in_place(files):
    """``-o /dev/stdout`` writes the metrics to standard output; no temporary file is made in
    /dev and the device is not replaced by a file."""
    result = cli("score", "--qrels", files / "qrels.txt", "--run", files / "run.trec", "-q",
                 "-o", "/dev/stdout")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["official"]
    assert not [p for p in Path("/dev").glob(".*.tmp")]


@pytest.mark.parametrize("lines", [3, 360_000], ids=["one-block", "blocks"])
@pytest.mark.parametrize("command", ["score", "validate"])
def test_bad_qrels_while_the_run_is_read_ahead_is_one_line_and_a_clean_exit(tmp_path, command,
                                                                             lines):
    """score and validate start reading the run on other threads before the qrels load; bad
    qrels must stop those threads before the process exits: exit 2 and one line, never a signal
    (a reader thread left running at interpreter shutdown crashed it with SIGSEGV). Fresh
    interpreters, 8 of each under CI (tests/budget.py)."""
    run = tmp_path / "run.trec"
    with open(run, "w") as fh:  # 360k lines: about 24 MB, several blocks still being parsed
        fh.writelines(f"q{n // 120} Q0 skill-{n} {n % 120 + 1} {1000 - n % 120}.5 run\n"
                      for n in range(lines))
    qrels = tmp_path / "queries.jsonl"
    qrels.write_text(json.dumps({"id": "q0", "labels": [{"id": "skill-0", "relevance": "1"}]})
                     + "\n")
    for _ in range(repeats(8)):
        done = subprocess.run([sys.executable, "-m", "skillret.cli", command, "--qrels",
                               str(qrels), "--run", str(run)], capture_output=True, text=True)
        assert done.returncode == 2, done
        assert done.stderr.count("\n") == 1 and "is not a number" in done.stderr, done.stderr


@pytest.mark.parametrize("error", [RuntimeError("can't start new thread"),
                                   pa.lib.ArrowException("Unknown error: Failed to launch thread")],
                         ids=["python", "arrow"])
def test_a_thread_the_system_will_not_start_is_one_line(error, capsys):
    """Under ``ulimit -v`` a reading thread's stack may not fit: one line, exit 2 (seen with
    Python's executor and Arrow's pool when the limit is tight)."""
    from skillret.cli.guard import guarded

    def work():
        raise error
    assert guarded(work) == 2
    assert capsys.readouterr().err == (
        "skillret-eval: error: out of memory (inputs are bounded by --max-input-size and "
        "--max-json-depth; TREC and Parquet runs are streamed): a reading thread could not be "
        "started\n")


def test_other_runtime_errors_are_not_taken_for_memory(capsys):
    from skillret.cli.guard import guarded

    def work():
        raise RuntimeError("a bug")
    with pytest.raises(RuntimeError, match="a bug"):
        guarded(work)


def test_a_link_to_standard_output_is_written_through_not_replaced(files, tmp_path):
    """``-o out.json`` where out.json links to /dev/stdout, standard output redirected to a
    file (as ``-o /dev/stdout > file`` is): the metrics reach the file and the link stays a
    link (a rename over it would have replaced the link; over /dev/stdout, the device name)."""
    link = tmp_path / "out.json"
    link.symlink_to("/dev/stdout")
    captured = tmp_path / "captured.json"
    with open(captured, "w") as stdout:
        done = subprocess.run([sys.executable, "-m", "skillret.cli", "score", "--qrels",
                               str(files / "qrels.txt"), "--run", str(files / "run.trec"), "-q",
                               "-o", str(link)], stdout=stdout, stderr=subprocess.PIPE,
                              text=True)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == "/dev/stdout"
    assert json.loads(captured.read_text())["official"]
