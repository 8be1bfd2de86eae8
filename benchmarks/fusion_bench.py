"""Benchmark: ``skillret-eval fuse`` against ranx's ``fuse``, as whole processes.

Run it from the repository root, in an environment with ``pip install -e ".[bench]"``, under
the shared lock::

    flock /tmp/skillret-bench.lock python benchmarks/fusion_bench.py
    flock /tmp/skillret-bench.lock python benchmarks/fusion_bench.py --scales small --repeat 5

Data: three SkillRet-shaped TREC runs over one pool of 6,006 skills, for the same queries,
sorted by query id (``q-000001``...), 100 results per query with BM25-like scores and about 2 %
exact ties (``datagen.py``'s shapes). The runs share about two thirds of their skills per query:
each draws its 100 from the same 150 candidates. Cached in ``benchmarks/.data/`` (git-ignored).

Contenders (each a separate process; one warm-up run, then ``--repeat`` timed runs,
round-robin, of which ranx takes part in the first ``--ranx-repeat``; medians):

- ``skillret``: ``skillret-eval fuse --run A --run B --run C --method M -o out.trec``;
- ``ranx``: ``ranx_fuse.py``: ``Run.from_file`` x 3, ``ranx.fuse``, ``Run.save`` (TREC).

Scales (queries x 100 rows per run): small = 4,392 (439k rows, SkillRet's test split), medium =
20,000 (2M), large = 100,000 (10M). ranx holds three runs in typed dicts; at 10M rows per run
it would need more memory than this shared machine has (see docs/benchmarks.md), so it runs at
small and medium only unless ``--ranx-large``. Peak RSS is measured as bench.py measures it.

The fused runs are compared, ranx's against skillret's uncut (an extra, untimed run with a
huge ``--depth``): every pair's score and rank, and the queries whose top 100 differ; every
difference must come from a tie (see :func:`compare`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import datagen
from bench import machine, measure, skillret_argv

HERE = Path(__file__).resolve().parent
SCALES = {"small": 4_392, "medium": 20_000, "large": 100_000}
RUNS = 3
SHARED = 150                    # candidates per query that the runs draw their 100 from
TARGETS = [("small", "skillret", "wall_s", 1.0), ("large", "skillret", "ratio", 0.3)]


# --- data -----------------------------------------------------------------------------------
def fusion_runs(data_dir: Path, queries: int, seed: int = 1) -> list[str]:
    """Three TREC runs for the same queries over one skill pool (cached)."""
    folder = data_dir / f"fusion-{queries}q-seed{seed}-v{datagen.GENERATOR_VERSION}"
    paths = [folder / f"run{i + 1}.trec" for i in range(RUNS)]
    if all(p.exists() for p in paths):
        return [str(p) for p in paths]
    folder.mkdir(parents=True, exist_ok=True)
    pool_rng = np.random.default_rng([seed, 0])
    skills = datagen.skill_pool(pool_rng)
    perm = pool_rng.permutation(datagen.POOL)
    steps = datagen.coprime_steps(datagen.POOL)
    handles = [open(p.with_suffix(".tmp"), "wb") for p in paths]
    try:
        for block, first in enumerate(range(0, queries, datagen.BLOCK_QUERIES)):
            n = min(datagen.BLOCK_QUERIES, queries - first)
            rng = np.random.default_rng([seed, 1, block])
            qids = datagen.query_ids(first, n)
            start, step = rng.integers(0, datagen.POOL, n), rng.choice(steps, n)
            shared = perm[(start[:, None] + step[:, None] * np.arange(SHARED)) % datagen.POOL]
            for i, fh in enumerate(handles):
                run_rng = np.random.default_rng([seed, 2 + i, block])
                pick = np.argsort(run_rng.random((n, SHARED)), axis=1)[:, :datagen.DEPTH]
                cand = np.take_along_axis(shared, pick, axis=1)
                fh.write(datagen.text_buffer(datagen.run_block(run_rng, qids, cand, skills)))
    finally:
        for fh in handles:
            fh.close()
    for p in paths:
        os.replace(p.with_suffix(".tmp"), p)
    return [str(p) for p in paths]


# --- contenders -----------------------------------------------------------------------------
def contenders(runs: list[str], method: str, norm: str, outdir: Path, with_ranx: bool) -> dict:
    ours = ["fuse", *[a for r in runs for a in ("--run", r)], "--method", method,
            "--output", str(outdir / "skillret.trec")]
    if method != "rrf":
        ours += ["--norm", norm]
    specs = {"skillret": {"argv": skillret_argv(*ours), "out": outdir / "skillret.trec"}}
    if with_ranx:
        specs["ranx"] = {"argv": [sys.executable, str(HERE / "ranx_fuse.py"), method, norm,
                                  str(outdir / "ranx.trec"), *runs],
                         "out": outdir / "ranx.trec"}
    return specs


def run_contenders(specs: dict, repeat: int, ranx_repeat: int, timeout: float) -> dict:
    results = {name: [] for name in specs}
    for name, spec in specs.items():   # warm-up: file-system cache, ranx's numba cache
        if name == "ranx" and not ranx_repeat:
            continue
        warm = measure(spec["argv"], timeout)
        if warm["returncode"] != 0:
            raise SystemExit(f"{name} failed: {warm['stderr']}")
    for i in range(repeat):
        for name, spec in specs.items():
            if name == "ranx" and i >= ranx_repeat:
                continue
            result = measure(spec["argv"], timeout)
            if result["returncode"] != 0:
                raise SystemExit(f"{name} failed: {result['stderr']}")
            results[name].append(result)
    return {name: {"wall_s": round(statistics.median(r["wall_s"] for r in runs), 3),
                   "rss_mib": round(statistics.median(r["rss_mib"] for r in runs), 1),
                   "walls": [r["wall_s"] for r in runs]}
            for name, runs in results.items() if runs}  # --ranx-repeat 0: ranx not timed


# --- comparing the fused runs -------------------------------------------------------------
def read_trec(path: Path) -> pa.Table:
    import pyarrow.csv as pacsv
    return pacsv.read_csv(path, read_options=pacsv.ReadOptions(
        column_names=["q", "q0", "skill", "rank", "score", "tag"]),
        parse_options=pacsv.ParseOptions(delimiter=" "),
        convert_options=pacsv.ConvertOptions(column_types={"q": pa.string(),
                                                           "skill": pa.string()}))


def compare(ours: Path, theirs: Path, inputs: list[str], depth: int = 100) -> dict:
    """skillret's fused run (uncut) against ranx's: every pair's score and rank, the top-``depth``
    sets, and whether each difference comes from a tie.

    A fused score differs only when some run ranks the skill differently in the two tools,
    which can only happen inside a tie of that run (scores equal as trec_eval compares them,
    32-bit floats: skillret breaks it by skill id, ranx by its own sort). A rank then differs
    only in a query where a score differs, or inside a tie of fused scores.
    """
    import pandas as pd
    a = read_trec(ours).to_pandas()[["q", "skill", "rank", "score"]]
    b = read_trec(theirs).to_pandas()[["q", "skill", "rank", "score"]]
    both = a.merge(b, on=["q", "skill"], suffixes=("", "_ranx"))
    tied_in_input = set()
    for path in inputs:
        run = read_trec(Path(path)).to_pandas()[["q", "skill", "score"]]
        run["s32"] = run["score"].astype(np.float32)
        tied = run[run.duplicated(["q", "s32"], keep=False)]
        tied_in_input.update(zip(tied["q"], tied["skill"]))
    score_differs = (both["score"] - both["score_ranx"]).abs() > 1e-12
    unexplained_scores = sum((q, s) not in tied_in_input for q, s in zip(
        both.loc[score_differs, "q"], both.loc[score_differs, "skill"]))
    fused_tied = set()      # ties among fused scores, on either side
    for run in (a, b):
        run["s32"] = run["score"].astype(np.float32)
        tie = run.duplicated(["q", "s32"], keep=False)
        fused_tied.update(zip(run.loc[tie, "q"], run.loc[tie, "skill"]))
    queries_with_score_difference = set(both.loc[score_differs, "q"])
    rank_differs = both["rank"] != both["rank_ranx"]
    explained_rank = [q in queries_with_score_difference or (q, s) in fused_tied
                      for q, s in zip(both.loc[rank_differs, "q"], both.loc[rank_differs, "skill"])]
    top_a = a[a["rank"] <= depth].groupby("q")["skill"].apply(frozenset)
    top_b = b[b["rank"] <= depth].groupby("q")["skill"].apply(frozenset)
    joined = pd.concat([top_a, top_b], axis=1, keys=["a", "b"])
    return {"pairs": len(a), "pairs_ranx": len(b), "common_pairs": len(both),
            "pairs_with_other_score": int(score_differs.sum()),
            "of_which_not_tied_in_an_input_run": int(unexplained_scores),
            "max_abs_score_difference": float((both["score"] - both["score_ranx"]).abs().max()),
            "pairs_ranked_differently": int(rank_differs.sum()),
            "of_which_unexplained": int(len(explained_rank) - sum(explained_rank)),
            "queries_with_other_top_set": int((joined["a"] != joined["b"]).sum()),
            "queries": len(top_a)}


# --- main -------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", nargs="+", default=["small", "medium", "large"],
                        choices=list(SCALES))
    parser.add_argument("--methods", nargs="+", default=["rrf", "combsum"])
    parser.add_argument("--norm", default="minmax")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ranx-repeat", type=int, default=2,
                        help="timed ranx runs (it takes a minute or more each)")
    parser.add_argument("--ranx-large", action="store_true",
                        help="also run ranx at 10M rows per run (needs ~30 GB)")
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--json", type=Path, help="write all measurements here")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args(argv)

    import tempfile
    results = {"machine": machine(), "scales": {}}
    for scale in args.scales:
        start = time.perf_counter()
        runs = fusion_runs(args.data_dir, SCALES[scale])
        print(f"{scale}: 3 runs x {SCALES[scale] * datagen.DEPTH:,} rows "
              f"({time.perf_counter() - start:.1f} s to generate or find)", flush=True)
        for method in args.methods:
            with tempfile.TemporaryDirectory() as tmp:
                specs = contenders(runs, method, args.norm, Path(tmp),
                                   with_ranx=scale != "large" or args.ranx_large)
                measured = run_contenders(specs, args.repeat, args.ranx_repeat, args.timeout)
                if "ranx" in measured:   # against skillret's uncut ranking (not timed)
                    full = list(specs["skillret"]["argv"])
                    full[full.index("--output") + 1] = str(Path(tmp) / "full.trec")
                    full += ["--depth", "1000000000"]
                    if measure(full, args.timeout)["returncode"] != 0:
                        raise SystemExit("skillret --depth 1000000000 failed")
                    measured["ranx"]["comparison"] = compare(Path(tmp) / "full.trec",
                                                             specs["ranx"]["out"], runs)
                    measured["skillret"]["ratio"] = round(
                        measured["skillret"]["wall_s"] / measured["ranx"]["wall_s"], 3)
            results["scales"].setdefault(scale, {})[method] = measured
            for name, m in measured.items():
                extra = f", {m['ratio']}x ranx" if "ratio" in m else ""
                print(f"  {method:8} {name:8} wall {m['wall_s']:7.2f} s  peak RSS "
                      f"{m['rss_mib']:8.1f} MiB{extra}  (runs: {m['walls']})", flush=True)
                if "comparison" in m:
                    print(f"    vs skillret: {json.dumps(m['comparison'])}", flush=True)
    for scale, contender, key, limit in TARGETS:
        for method, measured in results["scales"].get(scale, {}).items():
            value = measured.get(contender, {}).get(key)
            if value is not None:
                print(f"target {scale} {method} {key} <= {limit}: {value} "
                      f"{'PASS' if value <= limit else 'MISS'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
