"""Benchmark of `skillret-eval report` (the pairwise table) and `skillret-eval queries` (#22).

- **report**: 30 runs' per-query tables over 4,392 queries (SkillRet's test split; the tables
  of `bench_compare.py`), laid out as a pipeline's workspace (params.yaml, dvc.lock); one whole
  `skillret-eval report --format json` process: 435 pairs x 4 metrics = 1,740 tests in one
  family, 10,000 sign flips. Wall time and peak RSS (wait4), repeated; the output must be
  byte-identical run to run and with 1 or 2 BLAS threads. In process, the family's tests alone
  (`results_table`, which goes through `compare_pairs`) and every entry checked against them.
- **queries**: two 439k-row TREC runs (4,392 queries x 100; `datagen.py`'s run, and the same
  run with every score scaled by a random factor in [0.8, 1.2] and re-sorted by score within
  each query, so rankings change), scored and explained in one `skillret-eval queries --worst
  10 --best 10` process.

    flock /tmp/skillret-bench.lock python benchmarks/bench_report.py [--repeat 3]
        [--only report|queries]

The processes run this checkout's skillret (PYTHONPATH), byte-compiled first as ``pip install``
compiles a package (``bench.byte_compile``: under PYTHONDONTWRITEBYTECODE=1 an editable install
would recompile skillret's modules in every process).

Targets: report <= 20 s and <= 1 GiB; queries <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from bench import byte_compile, rss_wrapper  # noqa: E402
from bench_compare import METRICS, make_tables  # noqa: E402


def whole_process(argv: list[str], cwd: Path, env_extra: dict | None = None) -> dict:
    """One ``skillret-eval`` process: wall and CPU time, peak RSS, standard output. It runs this
    checkout's skillret (first on PYTHONPATH), whatever an editable install points at. Peak RSS
    comes from a small wrapper that forks it (``bench.rss_wrapper``): a child of this process
    would report this process's high-water mark when it is higher."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, **(env_extra or {})}
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp:
        rss_file = os.path.join(tmp, "rss")
        start = time.perf_counter()
        proc = subprocess.Popen(rss_wrapper(rss_file) + argv, cwd=cwd, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = proc.stdout.read()
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.stdout.close()
        proc.stderr.close()
        rss = Path(rss_file).read_text().split() if os.path.exists(rss_file) else []
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.decode()}")
    peak_kib = next((int(t) for t in reversed(rss) if t.isdigit()), 0)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": peak_kib / 1024, "output": out}


def cli() -> list[str]:
    return [sys.executable, "-c", "from skillret.cli import run; run()"]


def report_project(folder: Path, runs: int, queries: int, permutations: int) -> list[str]:
    tables = folder / "outputs" / "per_query"
    tables.mkdir(parents=True)
    names = make_tables(tables, runs, queries)
    params = {"runs": {n: f"runs/{n}.trec" for n in names},
              "compare": {"baseline": names[0], "metrics": list(METRICS),
                          "permutations": permutations, "bootstrap": 2000, "seed": 0,
                          "correction": "holm", "alpha": 0.05}}
    (folder / "params.yaml").write_text(json.dumps(params))
    lock = {"schema": "2.0", "stages": {
        f"score@{n}": {"outs": [{"path": f"outputs/per_query/{n}.tsv"}]} for n in names}}
    (folder / "dvc.lock").write_text(json.dumps(lock))
    return names


def bench_report(args, tmp: Path) -> dict:
    folder = tmp / "project"
    names = report_project(folder, args.runs, args.queries, args.permutations)
    argv = cli() + ["report", "--format", "json"]
    whole_process(argv, folder)  # warm-up: page cache, bytecode
    results = [whole_process(argv, folder) for _ in range(args.repeat)]
    one = whole_process(argv, folder, {"OPENBLAS_NUM_THREADS": "1"})
    two = whole_process(argv, folder, {"OPENBLAS_NUM_THREADS": "2"})
    outputs = {r["output"] for r in results} | {one["output"], two["output"]}
    record = json.loads(results[0]["output"])

    sys.path.insert(0, str(ROOT))
    from skillret.analysis.compare import compare_pairs, results_table
    from skillret.io.per_query import read_table_file

    tables = {n: read_table_file(folder / "outputs" / "per_query" / f"{n}.tsv", list(METRICS))
              for n in names}
    start = time.perf_counter()
    ours = results_table(tables, list(METRICS), source="x",
                         permutations=args.permutations)[0].tests
    fast = time.perf_counter() - start
    start = time.perf_counter()
    pairs = {(a, b): (tables[a], tables[b]) for i, a in enumerate(names) for b in names[i + 1:]}
    comparison, _ = compare_pairs(pairs, list(METRICS), baseline_label="x",
                                  permutations=args.permutations, bootstrap=0)
    slow = time.perf_counter() - start
    theirs = {(a, b, m): e for (a, b), es in comparison.result["runs"].items()
              for m, e in es.items()}
    walls = [r["wall_s"] for r in results]
    return {"median_s": statistics.median(walls), "walls": walls,
            "peak_rss_mib": max(r["peak_rss_mib"] for r in results + [one, two]),
            "one_thread_s": one["wall_s"], "two_threads_s": two["wall_s"],
            "identical": len(outputs) == 1, "tests": record["tests"]["family"],
            "significant": sum(p["significant"] for p in record["pairs"]),
            "in_process_s": fast, "compare_pairs_s": slow, "equal_to_compare": ours == theirs}


def second_run(source: Path, target: Path, seed: int = 1) -> None:
    """The run with every score scaled by a random factor in [0.8, 1.2] (6 decimals)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(source, read_options=pacsv.ReadOptions(
        column_names=["q", "q0", "skill", "rank", "score", "tag"]),
        parse_options=pacsv.ParseOptions(delimiter=" "),
        convert_options=pacsv.ConvertOptions(column_types={
            "q": pa.string(), "skill": pa.string(), "rank": pa.string(),
            "score": pa.float64()}))
    rng = np.random.default_rng(seed)
    micro = np.round(table.column("score").to_numpy() * rng.uniform(0.8, 1.2, len(table))
                     * 1e6).astype(np.int64)
    query = table.column("q").combine_chunks()
    starts = np.ones(len(table), dtype=bool)
    starts[1:] = (pc.not_equal(query[1:], query[:-1])).to_numpy(zero_copy_only=False)
    group = np.cumsum(starts)
    order = np.lexsort((-micro, group))  # as a retriever writes it: by score within a query
    micro = micro[order]
    rank = np.arange(len(table)) - np.flatnonzero(starts)[group[order] - 1] + 1
    whole = pc.cast(pa.array(micro // 1_000_000), pa.string())
    frac = pc.utf8_lpad(pc.cast(pa.array(micro % 1_000_000), pa.string()), 6, padding="0")
    lines = pc.binary_join_element_wise(
        query.take(pa.array(order)), "Q0", table.column("skill").combine_chunks().take(
            pa.array(order)), pc.cast(pa.array(rank), pa.string()),
        pc.binary_join_element_wise(whole, frac, "."), "b\n", " ")
    target.write_bytes(b"".join(s.encode() for s in lines.to_pylist()))


def bench_queries(args, tmp: Path) -> dict:
    import datagen

    data = datagen.ensure_dataset(args.data_dir, "skillret", args.queries, 0)
    run_b = tmp / "run-b.trec"
    second_run(Path(data["run"]), run_b)
    argv = cli() + ["queries", "--qrels", data["qrels"], "--run", f"a={data['run']}",
                    "--run", f"b={run_b}", "--metric", "NDCG@10", "--worst", "10",
                    "--best", "10", "--format", "json"]
    whole_process(argv, tmp)
    results = [whole_process(argv, tmp) for _ in range(args.repeat)]
    record = json.loads(results[0]["output"])
    return {"median_s": statistics.median(r["wall_s"] for r in results),
            "walls": [r["wall_s"] for r in results],
            "cpu_s": statistics.median(r["cpu_s"] for r in results),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in results),
            "rows": data["rows"], "counts": record["counts"],
            "identical": len({r["output"] for r in results}) == 1}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--queries", type=int, default=4392)
    parser.add_argument("--permutations", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--only", choices=("report", "queries"),
                        help="measure one part only (its target alone decides the status)")
    args = parser.parse_args()
    byte_compile()  # as pip install does: no process recompiles skillret's modules
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        rep = bench_report(args, Path(tmp)) if args.only != "queries" else None
        qry = bench_queries(args, Path(tmp)) if args.only != "report" else None
    met = True
    if rep is not None:
        met = print_report(args, rep) and met
    if qry is not None:
        met = print_queries(qry) and met
    return 0 if met else 1


def print_report(args, rep: dict) -> bool:
    """The report part's lines; whether its targets are met."""
    pairs = args.runs * (args.runs - 1) // 2
    print(f"report: {args.runs} runs x {len(METRICS)} metrics x {args.queries} queries, "
          f"{pairs} pairs ({rep['tests']} tests, {rep['significant']} significant), "
          f"{args.permutations} sign flips")
    print(f"  whole process: median {rep['median_s']:.2f} s (runs: "
          f"{', '.join(f'{w:.2f}' for w in rep['walls'])}), peak RSS "
          f"{rep['peak_rss_mib']:.0f} MiB; 1 BLAS thread {rep['one_thread_s']:.2f} s, "
          f"2 threads {rep['two_threads_s']:.2f} s")
    print(f"  in process: the family {rep['in_process_s']:.2f} s; through compare_pairs "
          f"(one column per pair) {rep['compare_pairs_s']:.2f} s; every entry equal: "
          f"{rep['equal_to_compare']}")
    print(f"  output byte-identical across runs and BLAS threads: {rep['identical']}")
    met = (rep["median_s"] <= 20 and rep["peak_rss_mib"] <= 1024 and rep["identical"]
           and rep["equal_to_compare"])
    print(f"  targets (report <= 20 s and 1 GiB): {'met' if met else 'MISSED'}")
    return met


def print_queries(qry: dict) -> bool:
    """The queries part's lines; whether its target is met."""
    print(f"queries: two runs of {qry['rows']} rows, NDCG@10, worst 10 and best 10 "
          f"({qry['counts']})")
    print(f"  whole process: median {qry['median_s']:.2f} s (runs: "
          f"{', '.join(f'{w:.2f}' for w in qry['walls'])}), CPU (user + sys) median "
          f"{qry['cpu_s']:.2f} s, peak RSS {qry['peak_rss_mib']:.0f} MiB; byte-identical: "
          f"{qry['identical']}")
    met = qry["median_s"] <= 1 and qry["identical"]
    print(f"  target (queries <= 1 s): {'met' if met else 'MISSED'}")
    return met


if __name__ == "__main__":
    sys.exit(main())
