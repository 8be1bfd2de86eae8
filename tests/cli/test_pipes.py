"""Inputs that are streams, given as users give them: ``-`` (standard input), ``<(...)`` (bash's
process substitution, ``/dev/fd/N``), a FIFO; and commands stopped while they wait on one.

The failures users met are reproduced as they met them: real ``bash -c`` command lines, real
FIFOs (``os.mkfifo``) fed by a writer thread, real processes stopped by SIGINT, SIGTERM and
SIGKILL. The format matrix runs in this process over real pipes (``/dev/fd/N`` of an
``os.pipe`` fed by a thread, and a pipe made standard input), to keep the fast tier fast.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from skillret.cli import main

ROOT = Path(__file__).resolve().parents[2]
SKILLRET = f"{shlex.quote(sys.executable)} -m skillret.cli"

QRELS = {"q1": {"A": 1, "B": 1, "C": 2}, "q2": {"D": 2}, "q3": {"E": 1, "F": 1}}
RUN = {"q1": {"X": 5.0, "A": 4.0, "Y": 3.0, "C": 2.0}, "q2": {"D": 1.0, "G": 0.5},
       "q3": {"H": 2.0, "F": 1.5, "E": 0.25}}


def _rows(data: dict):
    return [(q, s, v) for q, d in data.items() for s, v in d.items()]


def _csv(header, rows, delimiter) -> bytes:
    lines = [delimiter.join(header)] + [delimiter.join(str(x) for x in r) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def _parquet(columns: dict) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue().to_pybytes()


def _table(fmt: str, header: tuple[str, str, str], rows) -> bytes:
    """`rows` as a JSON lines, CSV, TSV or Parquet file with these column names."""
    if fmt == "jsonl":
        return "".join(json.dumps(dict(zip(header, row))) + "\n" for row in rows).encode()
    if fmt in ("csv", "tsv"):
        return _csv(header, rows, "," if fmt == "csv" else "\t")
    return _parquet({name: list(column) for name, column in zip(header, zip(*rows))})


def run_bytes(fmt: str) -> bytes:
    rows = _rows(RUN)
    if fmt == "trec":
        ranked = [(q, s, v, i) for q, d in RUN.items()
                  for i, (s, v) in enumerate(d.items(), 1)]
        return "".join(f"{q} Q0 {s} {i} {v} t\n" for q, s, v, i in ranked).encode()
    if fmt == "json":
        return json.dumps(RUN).encode()
    if fmt == "results":  # SkillRet's results JSON
        return json.dumps({"metrics": {}, "retrieval": {"dev": {"q1": {"Z": 1.0}},
                                                        "test": RUN}}).encode()
    return _table(fmt, ("query_id", "skill_id", "score"), rows)


def qrels_bytes(fmt: str) -> bytes:
    rows = _rows(QRELS)
    if fmt == "trec":
        return "".join(f"{q} 0 {s} {g}\n" for q, s, g in rows).encode()
    if fmt == "json":
        return json.dumps(QRELS).encode()
    if fmt == "results":  # SkillRet's queries JSONL
        return "".join(json.dumps({"id": q, "query": "text", "labels": [
            {"id": s, "relevance": g} for s, g in d.items()]}) + "\n"
            for q, d in QRELS.items()).encode()
    return _table(fmt, ("query_id", "skill_id", "relevance"), rows)


#: "results": SkillRet's own files (a run's results JSON, the qrels' queries JSONL)
FORMATS = ["trec", "trec.gz", "json", "json.gz", "results", "results.gz", "jsonl", "jsonl.gz",
           "csv", "csv.gz", "tsv", "tsv.gz", "parquet"]


def encoded(make, fmt: str) -> bytes:
    base, _, gz = fmt.partition(".")
    data = make(base)
    return gzip.compress(data, mtime=0) if gz else data


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipes")
    for fmt in FORMATS:
        (d / f"run.{fmt}").write_bytes(encoded(run_bytes, fmt))
        (d / f"qrels.{fmt}").write_bytes(encoded(qrels_bytes, fmt))
    (d / "run.trec").write_bytes(run_bytes("trec"))
    (d / "qrels.txt").write_bytes(qrels_bytes("trec"))
    return d


@contextlib.contextmanager
def fd_pipe(data: bytes):
    """``/dev/fd/N``: the read end of a pipe a thread writes ``data`` into (what ``<(...)``
    gives a command)."""
    r, w = os.pipe()

    def write():
        with open(w, "wb") as fh, contextlib.suppress(BrokenPipeError):
            fh.write(data)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield f"/dev/fd/{r}"
    finally:
        os.close(r)
        writer.join(5)


@contextlib.contextmanager
def stdin_pipe(data: bytes):
    """Standard input (fd 0) is a pipe a thread writes ``data`` into."""
    saved = os.dup(0)
    with fd_pipe(data) as path:
        os.dup2(int(path.rsplit("/", 1)[1]), 0)
        try:
            yield "-"
        finally:
            os.dup2(saved, 0)
            os.close(saved)


@contextlib.contextmanager
def fifo(data: bytes, where: Path):
    """A FIFO a thread writes ``data`` into once a reader opens it."""
    path = where / f"stream-{len(list(where.iterdir()))}.fifo"
    os.mkfifo(path)

    def write():
        with open(path, "wb") as fh, contextlib.suppress(BrokenPipeError):
            fh.write(data)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield str(path)
    finally:
        if writer.is_alive():  # never opened: let the writer go
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(5)


def piped(kind: str, data: bytes, where: Path):
    return {"fd": lambda: fd_pipe(data), "stdin": lambda: stdin_pipe(data),
            "fifo": lambda: fifo(data, where)}[kind]()


def score_json(capsys, tmp_path, *args) -> dict:
    out = tmp_path / "m.json"
    status = main(["score", *map(str, args), "-q", "-o", str(out)])
    err = capsys.readouterr().err
    assert status == 0, err
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def expected(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("expected") / "m.json"
    assert main(["score", "--qrels", str(files / "qrels.txt"), "--run",
                 str(files / "run.trec"), "-q", "-o", str(out)]) == 0
    return json.loads(out.read_text())


# ---------------------------------------------------------------------- every format, piped
PIPES = ("fd", "stdin", "fifo")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_run_format_through_every_pipe(fmt, files, expected, capsys, tmp_path):
    data = (files / f"run.{fmt}").read_bytes()
    for kind in PIPES:
        with piped(kind, data, tmp_path) as run:
            assert score_json(capsys, tmp_path, "--qrels", files / "qrels.txt", "--run",
                              run) == expected, kind


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_qrels_format_through_every_pipe(fmt, files, expected, capsys, tmp_path):
    data = (files / f"qrels.{fmt}").read_bytes()
    for kind in PIPES:
        with piped(kind, data, tmp_path) as qrels:
            assert score_json(capsys, tmp_path, "--qrels", qrels, "--run",
                              files / "run.trec") == expected, kind


def test_a_stream_is_a_table_or_trec_by_its_first_line(files, expected, capsys, tmp_path):
    """Without an extension: a header of any names is CSV/TSV (`--columns` names them), a
    TREC line separated by tabs stays TREC."""
    renamed = _csv(("request", "skill_uuid", "overlap"), _rows(RUN), ",")
    with fd_pipe(renamed) as run:
        assert score_json(capsys, tmp_path, "--qrels", files / "qrels.txt", "--run", run,
                          "--columns", "query=request,skill=skill_uuid,score=overlap"
                          ) == expected
    tabs = run_bytes("trec").replace(b" ", b"\t")
    qrels_tabs = qrels_bytes("trec").replace(b" ", b"\t")
    with fd_pipe(tabs) as run, fd_pipe(qrels_tabs) as qrels:
        assert score_json(capsys, tmp_path, "--qrels", qrels, "--run", run) == expected


def test_every_command_reads_pipes(files, capsys, tmp_path):
    """validate, fuse, compare, report and queries: a run from stdin, another and the qrels
    from pipes and FIFOs, each giving what the files give."""
    run, qrels = (files / "run.trec").read_bytes(), (files / "qrels.txt").read_bytes()
    other = (files / "run.csv.gz").read_bytes()

    def both(argv_files, argv_pipes) -> list[str]:
        outs = []
        for argv in (argv_files, argv_pipes):
            status = main([str(a) for a in argv])
            captured = capsys.readouterr()
            assert status == 0, captured.err
            outs.append(captured.out)
        return outs

    fq, fr, fo = files / "qrels.txt", files / "run.trec", files / "run.csv.gz"
    stats = ["--permutations", "50", "--bootstrap", "0"]
    for command, kind, tail in (("compare", "fifo", stats),
                                ("report", "fd", ["--permutations", "50"]),
                                ("queries", "fifo", ["--worst", "2", "--best", "2"])):
        with piped(kind, qrels, tmp_path) as q, fd_pipe(other) as o, stdin_pipe(run):
            a, b = both([command, "--qrels", fq, "--run", f"a={fr}", "--run", f"b={fo}", *tail],
                        [command, "--qrels", q, "--run", "a=-", "--run", f"b={o}", *tail])
        assert a == b, command
    with fifo(qrels, tmp_path) as q, stdin_pipe(run):
        a, b = both(["validate", "--qrels", fq, "--run", fr],
                    ["validate", "--qrels", q, "--run", "-"])
    assert a.replace(str(fr), "-") == b
    with fifo(other, tmp_path) as o, stdin_pipe(run):
        (tmp_path / "1").mkdir(), (tmp_path / "2").mkdir()
        both(["fuse", "--run", f"a={fr}", "--run", f"b={fo}", "--method", "rrf", "-o",
              tmp_path / "1/f.trec"],
             ["fuse", "--run", "a=-", "--run", f"b={o}", "--method", "rrf", "-o",
              tmp_path / "2/f.trec"])
    assert (tmp_path / "1/f.trec").read_bytes() == (tmp_path / "2/f.trec").read_bytes()


def test_facets_and_params_from_pipes(files, capsys, tmp_path):
    facets = b'{"query_id": "q1", "domain": "x"}\n{"query_id": "q2", "domain": "y"}\n' \
             b'{"query_id": "q3", "domain": "x"}\n'
    params = b"eval:\n  profiles: [official]\n  breakdown: [domain]\n" \
             b"  breakdown_profile: official\n"
    argv = ["score", "--qrels", str(files / "qrels.txt"), "--run", str(files / "run.trec")]
    (tmp_path / "facets.jsonl").write_bytes(facets)
    (tmp_path / "params.yaml").write_bytes(params)
    assert main([*argv, "--facets", str(tmp_path / "facets.jsonl"), "--params",
                 str(tmp_path / "params.yaml")]) == 0
    from_files = capsys.readouterr().out
    with fd_pipe(facets) as f, stdin_pipe(params):
        assert main([*argv, "--facets", f, "--params", "-"]) == 0
    assert capsys.readouterr().out == from_files


def test_an_error_names_the_argument_as_typed(files, capsys):
    with stdin_pipe(b"q1 Q0 A 1 notanumber t\n"):
        assert main(["score", "--qrels", str(files / "qrels.txt"), "--run", "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("skillret-eval: error: -:1: ") and "/proc/" not in err
    with fd_pipe(b"") as run:
        assert main(["score", "--qrels", str(files / "qrels.txt"), "--run", run]) == 2
    assert capsys.readouterr().err == f"skillret-eval: error: {run}: file is empty\n"


def test_without_proc_a_named_copy_is_removed_at_the_end(files, expected, capsys, tmp_path,
                                                         monkeypatch):
    """Where there is no /proc/self/fd (macOS), the copy is a named file in TMPDIR, removed
    when the command ends."""
    from skillret.io import streams

    real = os.path.isdir
    monkeypatch.setattr(streams.os.path, "isdir", lambda p: p != "/proc/self/fd" and real(p))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    (tmp_path / "out").mkdir()
    with fd_pipe((files / "run.trec.gz").read_bytes()) as run:
        assert score_json(capsys, tmp_path / "out", "--qrels", files / "qrels.txt", "--run",
                          run) == expected
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


# ---------------------------------------------------------------------- as users met them
def bash(script: str, cwd, timeout=60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def test_process_substitution_is_not_an_empty_file(files, expected, tmp_path):
    """`score --qrels <(cat q.txt) --run <(cat r.trec)` said `/dev/fd/62: file is empty`."""
    result = bash(f"{SKILLRET} score --qrels <(cat {files}/qrels.txt) "
                  f"--run <(gzip -c {files}/run.trec) -q -o m.json", tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "m.json").read_text()) == expected


def test_run_from_standard_input_is_not_a_missing_file(files, expected, tmp_path):
    """`--run -` said `no such file`."""
    result = bash(f"gzip -c {files}/run.trec | {SKILLRET} score --qrels {files}/qrels.txt "
                  f"--run - -q -o m.json", tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "m.json").read_text()) == expected


def test_standard_input_given_twice_is_one_line(files, tmp_path):
    result = bash(f"{SKILLRET} score --qrels - --run - < {files}/run.trec", tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "--qrels and --run" in result.stderr


def feed_later(fifo: Path, data: bytes, delay: float = 0.3) -> threading.Thread:
    def write():
        time.sleep(delay)
        with open(fifo, "wb") as fh:
            fh.write(data)
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_fifos_are_read_as_streams(files, expected, tmp_path):
    """A FIFO run was "empty" and a FIFO qrels hung; both are read once their writers come,
    and a long wait is said once."""
    os.mkfifo(tmp_path / "run.fifo")
    os.mkfifo(tmp_path / "qrels.fifo")
    run_writer = feed_later(tmp_path / "run.fifo", (files / "run.parquet").read_bytes(), 0)
    proc = subprocess.Popen(["bash", "-c", f"{SKILLRET} score --qrels qrels.fifo --run run.fifo "
                             f"-q -o m.json"], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    note = proc.stderr.readline()  # the qrels' writer comes once the command says it waits
    qrels_writer = feed_later(tmp_path / "qrels.fifo", (files / "qrels.tsv.gz").read_bytes(), 0)
    rest = proc.communicate(timeout=60)[1]
    run_writer.join(5), qrels_writer.join(5)
    assert proc.returncode == 0, note + rest
    assert note == "skillret-eval: note: waiting for a writer to open qrels.fifo\n" and rest == ""
    assert json.loads((tmp_path / "m.json").read_text()) == expected


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def waiting(tmp_path: Path) -> subprocess.Popen:
    """`score` writing two outputs, waiting on a FIFO run nobody writes yet."""
    os.mkfifo(tmp_path / "run.fifo")
    (tmp_path / "out.json").write_text("old\n")
    proc = subprocess.Popen([sys.executable, "-m", "skillret.cli", "score", "--qrels",
                             str(ROOT / "data/sample/qrels/test.jsonl"), "--run", "run.fifo",
                             "-q", "-o", "out.json", "--per-query", "pq.tsv"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wchan, deadline = Path(f"/proc/{proc.pid}/wchan"), time.monotonic() + 30
    while time.monotonic() < deadline:  # blocked opening the FIFO (Linux's wait_for_partner)
        with contextlib.suppress(OSError):
            if "partner" in wchan.read_text():
                break
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_stopped_while_waiting_on_a_fifo(signum, tmp_path):
    """A `score` killed while it waits left `.out.json.skillret-<pid>-*.tmp` files; stopped
    now, it says so in one line, with 128 + the signal's number, and leaves nothing."""
    proc = waiting(tmp_path)
    assert leftovers(tmp_path) == []  # no temporary output before writing starts
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, err
    assert err == f"skillret-eval: stopped by {signal.Signals(signum).name}\n"
    assert leftovers(tmp_path) == [] and (tmp_path / "out.json").read_text() == "old\n"
    assert not (tmp_path / "pq.tsv").exists()


def test_killed_while_waiting_on_a_fifo_leaves_nothing(tmp_path):
    proc = waiting(tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "run.fifo"]


KILLED_WRITER = """
import os, sys, time
from pathlib import Path
from skillret.io.atomic import OutputSet
with OutputSet() as out:
    out.path(Path(sys.argv[1]) / "m.json").write_text("half")
    print("writing", flush=True)
    time.sleep(60)
"""


def test_killed_while_writing_leaves_nothing_git_sees_and_the_next_run_sweeps_it(files,
                                                                              tmp_path):
    """SIGKILL while an output is being written: the temporary file stays, matched by the
    project's .gitignore (and .dvcignore), and the next command writing there removes it."""
    repo = tmp_path / "project"
    (repo / "metrics").mkdir(parents=True)
    for name in (".gitignore", ".dvcignore"):
        shutil.copy(ROOT / name, repo / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(repo / "metrics")],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "writing\n"
    writer.kill()
    writer.wait(timeout=30)
    left = leftovers(repo / "metrics")
    assert len(left) == 1 and left[0].startswith(".m.json.skillret-")
    status = subprocess.run(["git", "status", "--porcelain", "--ignored=no"], cwd=repo,
                            capture_output=True, text=True, check=True)
    assert status.stdout == ""
    ignored = subprocess.run(["git", "check-ignore", "-q", f"metrics/{left[0]}"], cwd=repo)
    assert ignored.returncode == 0
    result = subprocess.run([sys.executable, "-m", "skillret.cli", "score", "--qrels",
                             str(files / "qrels.txt"), "--run", str(files / "run.trec"), "-q",
                             "-o", str(repo / "metrics" / "other.json")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert leftovers(repo / "metrics") == []


def test_dvcignore_skips_temporary_outputs():
    """The pattern DVC reads is the one git reads (dvc status then sees no new file)."""
    lines = [ln.strip() for name in (".gitignore", ".dvcignore")
             for ln in (ROOT / name).read_text().splitlines()]
    assert lines.count(".*.skillret-*.tmp") == 2



@pytest.mark.pipeline
def test_a_killed_writers_leftovers_trip_neither_dvc_nor_git(sample_pipeline, tmp_path):
    """In the reproduced sample pipeline, writers killed with SIGKILL inside outputs/runs (a
    stage's dependency: a new file there would change its hash) and metrics/runs (files git
    tracks) leave temporary files that `dvc status` and `git status` do not see."""
    import sample_pipeline as sample

    project = sample.copy(sample_pipeline.path, tmp_path / "project")
    for folder in ("outputs/runs", "metrics/runs"):
        writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(project / folder)],
                                  stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline() == "writing\n"
        writer.kill()
        writer.wait(timeout=30)
        assert len(leftovers(project / folder)) == 1
    assert sample.shell(project, "git status --porcelain") == ""
    assert "up to date" in sample.shell(project, "dvc status")
