"""``skillret-eval fuse`` as a user runs it: a real process, real files; bad input is one line,
exit status 2 and no output file."""

from __future__ import annotations

import subprocess
import sys

import cli_server
import pytest
from budget import repeats

R1 = "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 2 t\nq2 Q0 a 1 1 t\n"
R2 = "q1 Q0 c 1 9 t\nq1 Q0 d 2 1 t\nq3 Q0 x 1 5 t\n"
PARAMS = """\
runs:
  bm25: runs/bm25.trec
  dense: runs/dense.trec
fuse:
{fuse}
"""


def cli(*args, cwd=None):
    """``python -m skillret.cli fuse ARGS`` in a process of its own (forked:
    tests/cli_server.py)."""
    return cli_server.run("fuse", *args, cwd=cwd)


def fresh_cli(*args, cwd=None):
    """The same in a fresh interpreter, as a user starts it."""
    return subprocess.run([sys.executable, "-m", "skillret.cli", "fuse", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "bm25.trec").write_text(R1)
    (tmp_path / "runs" / "dense.trec").write_text(R2)
    return tmp_path


def test_fuse_writes_the_fused_run(files):
    done = cli("--run", "runs/bm25.trec", "--run", "runs/dense.trec", "--method", "rrf",
               "--output", "out/hybrid.trec", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("rrf (k=60, depth 100) of bm25, dense: 3 queries, 6 results -> "
                           "out/hybrid.trec\n")
    assert (files / "out" / "hybrid.trec").read_text().splitlines() == [
        f"q1 Q0 c 1 {1 / 62 + 1 / 61!r} hybrid", f"q1 Q0 a 2 {1 / 61!r} hybrid",
        f"q1 Q0 d 3 {1 / 62!r} hybrid", f"q1 Q0 b 4 {1 / 63!r} hybrid",
        f"q2 Q0 a 1 {1 / 61!r} hybrid", f"q3 Q0 x 1 {1 / 61!r} hybrid"]


def test_names_weights_and_formats(files):
    done = cli("--run", "lex=runs/bm25.trec", "--run", "emb=runs/dense.trec", "--method",
               "combsum", "--norm", "none", "--weight", "emb=0.5", "--depth", "1",
               "-o", "f.json", cwd=files)
    assert done.returncode == 0, done.stderr
    assert (files / "f.json").read_text() == \
        '{\n  "q1": {"c": 6.5},\n  "q2": {"a": 1},\n  "q3": {"x": 2.5}\n}\n'
    # the summary line shows the weights that are not 1
    assert done.stdout == ("combsum (norm=none, depth 1) of lex, emb (w=0.5): 3 queries, "
                           "3 results -> f.json\n")


@pytest.mark.parametrize("args, message", [
    (["--method", "borda"], "unknown fusion method 'borda'"),
    (["--method", "rrf", "--norm", "minmax"], "rrf fuses ranks, not scores: it takes no norm"),
    (["--method", "rrf", "--k", "0"], "k must be a number > 0"),
    (["--method", "rrf", "--k", "ten"], "--k 'ten': not a number"),
    (["--method", "rrf", "--weight", "sparse=2"], "a weight for 'sparse', which is not among"),
    (["--method", "rrf", "--weight", "bm25"], "--weight 'bm25': give NAME=NUMBER"),
    (["--method", "combsum", "--norm", "l2"], "unknown norm 'l2'"),
    (["--method", "rrf", "--depth", "0"], "depth must be an integer >= 1"),
    (["--method", "rrf", "--run", "runs/none.trec"], "runs/none.trec: no such run file"),
    (["--method", "rrf", "--run", "runs/bm25.trec"], "two runs are named 'bm25'"),
    (["--method", "rrf", "--output", "f.csv"], "cannot write a run as .csv"),
])
def test_bad_input_one_line_exit_2_nothing_written(files, args, message):
    if "--output" not in args:
        args = args + ["--output", "f.trec"]
    done = cli("--run", "runs/bm25.trec", "--run", "runs/dense.trec", *args, cwd=files)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in files.iterdir()) == ["runs"]


@pytest.mark.parametrize("fuse, message", [
    ("  bm25: {method: rrf, runs: [bm25, dense]}", "fuse.bm25: 'bm25' is already a registered"),
    ("  hybrid: {method: rrf, runs: [bm25, sparse]}", "fuse.hybrid: unknown run 'sparse'"),
    ("  hybrid: {method: wsum, runs: [bm25, dense]}", "fuse.hybrid: unknown fusion method"),
    ("  hybrid: {method: rrf, runs: [bm25, dense], k: -5}", "fuse.hybrid: k must be a number"),
    ("  hybrid: {method: rrf, runs: [bm25, dense], norm: zscore}", "it takes no norm"),
    ("  hybrid: {method: rrf, runs: [bm25, dense], weights: {mix: 2}}",
     "a weight for 'mix', which is not among the runs fused"),
    ("  hybrid: {method: rrf, runs: [bm25, mix]}\n  mix: {method: rrf, runs: [dense, hybrid]}",
     "a cycle of fused runs: hybrid -> mix -> hybrid"),
    ("  hybrid: {method: rrf, runs: [bm25]}", "runs must list at least two run names"),
    ("  hybrid: {method: rrf, runs: [bm25, dense], kk: 1}",
     "unknown key under fuse.hybrid: kk (did you mean k?)"),
    ("  ../hybrid: {method: rrf, runs: [bm25, dense]}", "fused run name '../hybrid' is not a"),
    ("  hybrid: {method: rrf, runs: [bm25, dense], weights: [2, 1]}",
     "params.yaml: 'fuse.hybrid.weights' must be a mapping"),
    ("  hybrid: {method: rrf, runs: [bm25, dense]}\nrun_options: {}\nruns:\n  bm25: {path: a}\n"
     "  dense: b", "params.yaml: runs.bm25 must be a file path (options such as the format go "
     "under run_options.bm25)"),
])
def test_bad_params_one_line_exit_2(files, fuse, message):
    (files / "params.yaml").write_text(PARAMS.format(fuse=fuse))
    done = cli("--params", "params.yaml", "--name", "hybrid", "--run-pattern", "runs/{}.trec",
               "-o", "f.trec", cwd=files)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr
    assert not (files / "f.trec").exists()


def test_fused_runs_of_fused_runs_from_params(files):
    """mix fuses hybrid, itself fused: computed on the way, from the registered runs' files
    (under runs:, or where --run-pattern says), never from another stage's output."""
    (files / "params.yaml").write_text(PARAMS.format(fuse=(
        "  hybrid: {method: rrf, runs: [bm25, dense]}\n"
        "  mix: {method: combmnz, runs: [hybrid, dense], norm: zscore, weights: {dense: 2},"
        " depth: 2}")))
    done = cli("--params", "params.yaml", "--name", "mix", "-o", "mix.trec", cwd=files)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("combmnz (norm=zscore, depth 2) of hybrid, dense (w=2): 3 queries, "
                           "4 results -> mix.trec\n")
    lines = (files / "mix.trec").read_text().splitlines()
    assert [line.split()[:4] for line in lines] == [
        ["q1", "Q0", "c", "1"], ["q1", "Q0", "a", "2"], ["q2", "Q0", "a", "1"],
        ["q3", "Q0", "x", "1"]]
    assert lines[0].endswith(" mix")
    (files / "canonical").mkdir()
    for name in ("bm25", "dense"):
        (files / "canonical" / f"{name}.trec").write_text(
            (files / "runs" / f"{name}.trec").read_text())
    done = cli("--params", "params.yaml", "--name", "mix", "--run-pattern",
               "canonical/{}.trec", "-o", "mix2.trec", cwd=files)
    assert done.returncode == 0, done.stderr
    assert (files / "mix2.trec").read_text() == (files / "mix.trec").read_text()
    assert [p.name for p in files.iterdir()] and not list(files.glob("**/hybrid*"))


def test_a_bad_run_stops_every_reader_before_exit(tmp_path):
    """Fusion reads each run on its own thread; a bad line in one must stop them all before the
    process exits (a reader left running at interpreter shutdown can crash it): exit 2, one
    line, every time (8 times under CI, a fresh interpreter each: tests/budget.py)."""
    good, bad = tmp_path / "a.trec", tmp_path / "b.trec"
    good.write_text("".join(f"q{q} Q0 s{i} {i} {100 - i} a\n" for q in range(50)
                            for i in range(1, 40)))
    bad.write_text("q0 Q0 s1 1 0.5 b\nq1 Q0 s1 1 x b\n")
    for _ in range(repeats(8)):
        done = fresh_cli("--method", "rrf", "--run", str(good), "--run", str(bad), "--output",
                   str(tmp_path / "f.trec"))
        assert done.returncode == 2, done
        assert done.stderr.count("\n") == 1 and "b.trec:2" in done.stderr, done.stderr
