"""Benchmark of the paired significance tests (`compare`), as the pipeline's compare stage runs.

Generates 30 runs' per-query tables over 4,392 queries (SkillRet's test split) with four metric
columns whose values take the few levels real metrics take, then times the compare stage's work in a
process of its own (read 30 tables, 29 x 4 pairs, 10,000 sign flips and 2,000 bootstrap
resamples, JSON and Markdown written), and reports its peak RSS. It also checks that the output
is byte-identical run to run and whatever the number of BLAS threads.

    flock /tmp/skillret-bench.lock python benchmarks/bench_compare.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI and the stages run (in process)
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("Recall@5", "NDCG@10", "Completeness@5", "MRR@5")
LEVELS = {
    "Recall@5": [0.0, 1 / 3, 0.5, 2 / 3, 1.0],
    "NDCG@10": [0.0, 0.30103, 0.38685, 0.43068, 0.5, 0.63093, 0.76555, 0.91972, 1.0],
    "Completeness@5": [0.0, 1.0],
    "MRR@5": [0.0, 0.2, 0.25, 1 / 3, 0.5, 1.0],
}


def make_tables(outdir: Path, runs: int, queries: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    ids = np.array([f"q-{i:06d}" for i in range(1, queries + 1)])
    base_level = {m: rng.integers(0, len(LEVELS[m]), queries) for m in METRICS}
    names = []
    for r in range(runs):
        name = f"run-{r:02d}"
        names.append(name)
        lines = ["query_id\tin_run\tretrieved\trelevant\t" + "\t".join(METRICS)]
        cols = []
        for m in METRICS:
            levels = np.array(LEVELS[m])
            shift = rng.integers(-1, 2, queries) * (rng.random(queries) < 0.3)
            idx = np.clip(base_level[m] + shift + (r % 3 == 0) * (rng.random(queries) < 0.05),
                          0, len(levels) - 1)
            cols.append([repr(float(v)) for v in levels[idx]])
        for i, qid in enumerate(ids):
            lines.append(f"{qid}\ttrue\t100\t2\t" + "\t".join(c[i] for c in cols))
        (outdir / f"{name}.tsv").write_text("\n".join(lines) + "\n")
    return names


#: The compare stage's work on tables already written: read them, test every run against the
#: first, write the JSON and Markdown (the stage itself reads a whole project's files).
STAGE = """
import sys
from pathlib import Path
from skillret.analysis.compare import compare
from skillret.io.per_query import read_table_file
from skillret.render.compare import write_comparison
folder, out, md, *names = sys.argv[1:]
metrics = {metrics!r}
tables = {{n: read_table_file(Path(folder) / f"{{n}}.tsv", metrics) for n in names}}
result, _ = compare((names[0], tables[names[0]]), {{n: tables[n] for n in names[1:]}}, metrics,
                    permutations={permutations}, bootstrap={bootstrap}, seed=0,
                    correction="holm", alpha=0.05)
write_comparison(result, out, md)
"""


def run_stage(workdir: Path, names: list[str], args, tag: str,
              threads: str | None = None) -> dict:
    env = dict(os.environ)
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = threads
    out, md = workdir / f"{tag}.json", workdir / f"{tag}.md"
    code = STAGE.format(metrics=list(METRICS), permutations=args.permutations,
                        bootstrap=args.bootstrap)
    argv = [sys.executable, "-c", code, str(workdir / "tables"), str(out), str(md), *names]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if status != 0:
        raise SystemExit(f"compare failed: {err}")
    return {"wall_s": wall, "peak_rss_mib": usage.ru_maxrss / 1024,
            "output": out.read_bytes() + md.read_bytes()}


def in_process(workdir: Path, names: list[str], permutations: int, bootstrap: int) -> dict:
    """Where the time goes: the tests alone, on tables already in memory."""
    sys.path.insert(0, str(ROOT))
    from skillret.io.per_query import read_table_file
    from skillret.analysis.significance import bootstrap_interval, paired_tests, sign_flip_p

    tables = [read_table_file(workdir / "tables" / f"{n}.tsv", list(METRICS)) for n in names]
    base = np.column_stack([tables[0].values[m] for _ in tables[1:] for m in METRICS])
    other = np.column_stack([t.values[m] for t in tables[1:] for m in METRICS])
    diffs = other - base
    timings = {}
    start = time.perf_counter()
    sign_flip_p(diffs, permutations, np.random.default_rng(0))
    timings["sign_flips_s"] = time.perf_counter() - start
    start = time.perf_counter()
    bootstrap_interval(diffs, bootstrap, np.random.default_rng(0))
    timings["bootstrap_s"] = time.perf_counter() - start
    start = time.perf_counter()
    paired_tests(base, other, permutations=permutations, bootstrap=bootstrap)
    timings["all_tests_s"] = time.perf_counter() - start
    timings["pairs"] = diffs.shape[1]
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--queries", type=int, default=4392)
    parser.add_argument("--permutations", type=int, default=10000)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--target", type=float, default=10.0, help="seconds, whole process")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        workdir = Path(tmp)
        (workdir / "tables").mkdir()
        names = make_tables(workdir / "tables", args.runs, args.queries)
        run_stage(workdir, names, args, "warmup")
        results = [run_stage(workdir, names, args, f"r{i}") for i in range(args.repeat)]
        two = run_stage(workdir, names, args, "threads2", threads="2")
        walls = [r["wall_s"] for r in results]
        rss = max(r["peak_rss_mib"] for r in results)
        identical = len({r["output"] for r in results} | {two["output"]}) == 1
        split = in_process(workdir, names, args.permutations, args.bootstrap)

    median = statistics.median(walls)
    print(f"compare stage: {args.runs} runs x {len(METRICS)} metrics x {args.queries} queries "
          f"({split['pairs']} pairs), {args.permutations} sign flips, {args.bootstrap} "
          f"bootstrap resamples")
    print(f"  whole process: median {median:.2f} s (runs: "
          f"{', '.join(f'{w:.2f}' for w in walls)}), peak RSS {rss:.0f} MiB; "
          f"2 BLAS threads: {two['wall_s']:.2f} s")
    print(f"  in process: sign flips {split['sign_flips_s']:.2f} s, bootstrap "
          f"{split['bootstrap_s']:.2f} s, all tests {split['all_tests_s']:.2f} s")
    print(f"  output byte-identical across runs and BLAS threads: {identical}")
    met = median <= args.target and identical
    print(f"  target <= {args.target:g} s: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
