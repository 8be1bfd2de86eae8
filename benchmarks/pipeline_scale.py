"""The pipeline at scale: 30 registered SkillRet-sized runs (4,392 queries x 100 results).

    flock /tmp/skillret-bench.lock python benchmarks/pipeline_scale.py [--runs 30] [--keep DIR]

Builds a git + DVC project from this tree's pipeline files (dvc.yaml without the example
retriever, stages/, skillret/) in a temporary folder, with TREC qrels and 30 TREC runs made by
benchmarks/datagen.py's generators (one qrels, 30 different rankings of the same candidates),
registered as a user does (``skillret-eval register``), a skills file with categories and a
queries file, so that the sample's other stages are kept: the fused run (``hybrid``, RRF of r00
and r01), eval.breakdown (n_required, skill_category) and the stages over every run (charts,
compare with its tests within strata and the headline). The project is
committed and cloned, and everything runs in the clone. Then measures, side by side in one
invocation:

- fresh ``dvc repro`` (every stage, each time in a new clone) against the official path
  looping over the same 30 files (a process per run: TREC read into dicts, then pytrec_eval;
  benchmarks/official_path.py), interleaved, ``--repeat`` times (3), medians; and checks that
  every official number is equal;
- a no-op ``dvc repro`` (median of 3);
- one run rewritten, then ``dvc repro`` (its stage and the stages over every run must run, and
  nothing else: not the fused run, which does not read it), ``--repeat`` times, median;
- dvc.lock lines per run;
- where the time goes: ``dvc repro --cprofile-dump`` of the no-op and one-changed repro (DVC's
  own process: its share against the time it waits on stage commands), and with
  ``--profile-fresh`` of every stage rerun.

Targets (#20): fresh <= 2.0x the official path; no-op <= 2.0 s; one changed run <= 5 s;
dvc.lock <= 60 lines per run. Prints a table and writes JSON (``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import datagen  # noqa: E402

QUERIES = 4392
SEED = 7
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@skillret.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@skillret.invalid",
           "GIT_CONFIG_NOSYSTEM": "1", "DVC_NO_ANALYTICS": "1"}
TARGETS = {"fresh_ratio": 2.0, "noop_s": 2.0, "one_changed_s": 5.0, "lock_lines_per_run": 60}
CATEGORIES = 12
AGGREGATE = {"charts", "compare", "fuse_inputs@hybrid"}


# --- data -----------------------------------------------------------------------------------

def write_data(folder: Path, runs: int, variant: int = 0, only: int | None = None) -> None:
    """qrels.txt and runs/rNN.trec: one qrels; run i ranks the same candidates its own way."""
    pool_rng = np.random.default_rng([SEED, 0])
    skills = datagen.skill_pool(pool_rng)
    perm = pool_rng.permutation(datagen.POOL)
    steps = datagen.coprime_steps(datagen.POOL)
    rng = np.random.default_rng([SEED, 1, 0])
    qids = datagen.query_ids(0, QUERIES)
    cand = datagen.candidates(rng, QUERIES, perm, steps)
    qrels_lines, _ = datagen.qrels_block(rng, qids, cand, skills)
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    if only is None:
        (folder / "qrels.txt").write_bytes(datagen.text_buffer(qrels_lines))
        # eval.breakdown's files: every skill's category, every query's id
        (folder / "skills.jsonl").write_text("".join(
            json.dumps({"id": skill, "category": f"c{i % CATEGORIES:02d}"}) + "\n"
            for i, skill in enumerate(skills.to_pylist())))
        (folder / "queries.jsonl").write_text("".join(
            json.dumps({"id": q}) + "\n" for q in qids.to_pylist()))
    for i in range(runs) if only is None else [only]:
        run_rng = np.random.default_rng([SEED, 2, i, variant])
        # a noisy reordering of the 100 retrieved candidates: each run finds other skills first
        noise = np.arange(datagen.DEPTH) + run_rng.normal(0, 8 + i, (QUERIES, datagen.DEPTH))
        order = np.argsort(noise, axis=1, kind="stable")
        mixed = np.take_along_axis(cand[:, :datagen.DEPTH], order, axis=1)
        lines = datagen.run_block(run_rng, qids, np.concatenate(
            [mixed, cand[:, datagen.DEPTH:]], axis=1), skills)
        (folder / "runs" / f"r{i:02d}.trec").write_bytes(datagen.text_buffer(lines))


# --- project --------------------------------------------------------------------------------

def sh(cwd: Path, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **GIT_ENV})
    if check and result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{result.stdout[-2000:]}\n"
                         f"{result.stderr[-2000:]}")
    return result


def dvc(cwd: Path, *args: str, check: bool = True) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    result = sh(cwd, sys.executable, "-m", "dvc", *args, check=check)
    return time.perf_counter() - start, result


def make_project(origin: Path, folder: Path, runs: int) -> None:
    """The pipeline project in ``origin`` (a git repository), runs registered with
    ``skillret-eval register`` as a user does; cloned into ``folder``, with the data."""
    for name in ("stages", "skillret"):
        shutil.copytree(ROOT / name, origin / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in (".dvcignore", "outputs/.gitignore"):
        (origin / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, origin / name)
    pipeline = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    pipeline["stages"].pop("retrieve")
    pipeline.pop("plots", None)
    (origin / "dvc.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params.pop("retrieve")
    params["data"] = {"skills": "skills.jsonl", "queries": "queries.jsonl", "split": None}
    params["qrels"] = {"path": "qrels.txt", "format": None, "split": None}
    params["runs"], params["run_options"] = {}, {}
    params["fuse"] = {"hybrid": {"method": "rrf", "runs": ["r00", "r01"]}}
    params["compare"]["baseline"] = "r00"
    (origin / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (origin / ".gitignore").write_text("__pycache__/\n/runs/\n/qrels.txt\n/*.jsonl\n")
    sh(origin, sys.executable, "-m", "skillret.cli", "register",
       *[f"runs/r{i:02d}.trec" for i in range(runs)])
    sh(origin, "git", "init", "-q", "-b", "main")
    sh(origin, sys.executable, "-m", "dvc", "init", "-q")
    sh(origin, sys.executable, "-m", "dvc", "config", "core.analytics", "false")
    sh(origin, "git", "add", "-A")
    sh(origin, "git", "commit", "-qm", "bench project")
    clone(origin, folder)
    for name in ("runs", "qrels.txt", "skills.jsonl", "queries.jsonl"):
        shutil.move(str(origin / name), str(folder / name))


def clone(origin: Path, target: Path) -> None:
    """A fresh clone of the project, its code byte-compiled as Python writes it at the first
    import on a machine that writes bytecode (this one sets PYTHONDONTWRITEBYTECODE=1, which
    would recompile the package in every stage's process: ~0.1 s each); git ignores
    __pycache__, and DVC too (.dvcignore)."""
    sh(origin.parent, "git", "clone", "-q", str(origin), str(target))
    sh(target, sys.executable, "-m", "compileall", "-q", "skillret", "stages")


def another_clone(origin: Path, folder: Path, target: Path) -> None:
    """One more fresh clone of the project, its data hard-linked from ``folder``'s (the files
    the pipeline reads; nothing it writes)."""
    if target.exists():
        shutil.rmtree(target)
    clone(origin, target)
    for name in ("qrels.txt", "skills.jsonl", "queries.jsonl"):
        os.link(folder / name, target / name)
    (target / "runs").mkdir()
    for run in (folder / "runs").iterdir():
        os.link(run, target / "runs" / run.name)


def stages_run(output: str) -> list[str]:
    return re.findall(r"Running stage '([^']+)'", output)


# --- measurements ---------------------------------------------------------------------------

def official_loop(folder: Path, runs: int, out: Path) -> float:
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for i in range(runs):
        sh(folder, sys.executable, str(HERE / "official_path.py"), "qrels.txt",
           f"runs/r{i:02d}.trec", str(out / f"r{i:02d}.json"))
    return time.perf_counter() - start


def check_numbers(folder: Path, runs: int, out: Path) -> int:
    """Runs whose official numbers differ from the official path's (must be 0)."""
    differ = 0
    for i in range(runs):
        mine = json.loads((folder / "metrics" / "runs" / f"r{i:02d}.json").read_text())
        theirs = json.loads((out / f"r{i:02d}.json").read_text())
        differ += mine["official"] != theirs
    return differ


def profile_summary(path: Path, top: int = 8) -> dict:
    """DVC's own process: total, time waiting on stage commands, and the top own-time entries."""
    stats = pstats.Stats(str(path))
    entries = stats.stats  # (file, line, func) -> (cc, nc, tt, ct, callers)
    total = max(ct for _, _, _, ct, _ in entries.values())
    waiting = sum(ct for (file, _, func), (_, _, _, ct, _) in entries.items()
                  if func == "_run" and file.endswith(os.path.join("dvc", "stage", "run.py")))
    yaml_time = sum(tt for (file, _, _), (_, _, tt, _, _) in entries.items()
                    if "ruamel" in file or "/yaml/" in file)
    own = sorted(((tt, f"{Path(file).parent.name}/{Path(file).name}:{func}")
                  for (file, _, func), (_, _, tt, _, _) in entries.items()), reverse=True)
    return {"total_s": round(total, 2), "waiting_on_commands_s": round(waiting, 2),
            "yaml_parsing_s": round(yaml_time, 2),
            "top_own_time": [(name, round(tt, 3)) for tt, name in own[:top]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="build the project here and keep it")
    parser.add_argument("--json", type=Path, help="write the results as JSON")
    parser.add_argument("--repeat", type=int, default=3,
                        help="fresh repros (each in a fresh clone) and one-changed repros, "
                             "interleaved with official loops; medians (default 3)")
    parser.add_argument("--profile-fresh", action="store_true",
                        help="also rerun every stage under DVC's profiler (slow)")
    args = parser.parse_args(argv)

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="skillret-scale-")
    base = args.keep or Path(tmp.name)
    origin, folder = base / "origin", base / "project"
    for old in (origin, folder):
        if old.exists():
            shutil.rmtree(old)
    origin.mkdir(parents=True)
    load_start = [round(x, 2) for x in os.getloadavg()]
    start = time.perf_counter()
    write_data(origin, args.runs)
    make_project(origin, folder, args.runs)
    run_bytes = sum(p.stat().st_size for p in (folder / "runs").iterdir())
    print(f"data: {args.runs} runs x {QUERIES} queries x 100 = "
          f"{args.runs * QUERIES * 100:,} rows ({run_bytes / 1e9:.2f} GB), made in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    try:
        import _ruamel_yaml  # noqa: F401  (ruamel.yaml.clib's C parser)
        clib = True
    except ImportError:
        clib = False

    # side by side, interleaved: the official loop, a fresh repro (each in its own fresh
    # clone), the official loop, ..., the official loop; medians (this 2-vCPU machine's speed
    # moves by 20-30% from one minute to the next)
    clones = [folder] + [base / f"project-{i}" for i in range(2, args.repeat + 1)]
    for clone in clones[1:]:
        another_clone(origin, folder, clone)
    official = [official_loop(folder, args.runs, base / "official")]
    freshes, ran = [], None
    for clone in clones:
        seconds, result = dvc(clone, "repro")
        freshes.append(seconds)
        ran = ran or stages_run(result.stdout)
        assert stages_run(result.stdout) == ran, result.stdout  # every clone runs every stage
        official.append(official_loop(folder, args.runs, base / "official"))
    for clone in clones[1:]:
        shutil.rmtree(clone)
    fresh, official_s = statistics.median(freshes), statistics.median(official)
    differ = check_numbers(folder, args.runs, base / "official")
    sh(folder, "git", "add", "-A")
    sh(folder, "git", "commit", "-qm", "repro")

    noop = []
    for _ in range(3):
        seconds, result = dvc(folder, "repro")
        assert not stages_run(result.stdout), result.stdout
        noop.append(seconds)
    dvc(folder, "repro", "--cprofile-dump", str(base / "noop.prof"))

    changed = min(7, args.runs - 1)
    ones, one_ran = [], None
    for variant in range(1, args.repeat + 1):
        write_data(folder, args.runs, variant=variant, only=changed)
        seconds, result = dvc(folder, "repro")
        ones.append(seconds)
        one_ran = one_ran or stages_run(result.stdout)
        assert stages_run(result.stdout) == one_ran, result.stdout
    one = statistics.median(ones)
    lock_lines = len((folder / "dvc.lock").read_text().splitlines())
    write_data(folder, args.runs, variant=args.repeat + 1, only=changed)  # profiled
    dvc(folder, "repro", "--cprofile-dump", str(base / "one.prof"))
    if args.profile_fresh:  # every stage again, profiled (the profiler slows DVC's own code)
        dvc(folder, "repro", "--force", "--cprofile-dump", str(base / "fresh.prof"))

    results = {
        "load_average_start_end": [load_start, [round(x, 2) for x in os.getloadavg()]],
        "runs": args.runs, "rows_per_run": QUERIES * 100, "ruamel_yaml_clib": clib,
        "repeat": args.repeat, "fresh_s": round(fresh, 2),
        "fresh_all_s": [round(x, 2) for x in freshes], "stages_run_fresh": len(ran),
        "official_loop_s": [round(s, 2) for s in official],
        "fresh_ratio": round(fresh / official_s, 2),
        "official_numbers_differ": differ,
        "noop_s": round(statistics.median(noop), 2), "noop_all_s": [round(s, 2) for s in noop],
        "one_changed_s": round(one, 2), "one_changed_all_s": [round(x, 2) for x in ones],
        "one_changed_stages": one_ran,
        "lock_lines": lock_lines, "lock_lines_per_run": round(lock_lines / args.runs, 1),
        "profile_fresh": profile_summary(base / "fresh.prof") if args.profile_fresh else None,
        "profile_noop": profile_summary(base / "noop.prof"),
        "profile_one_changed": profile_summary(base / "one.prof"),
    }
    met = {
        "fresh_ratio": results["fresh_ratio"] <= TARGETS["fresh_ratio"],
        "noop_s": results["noop_s"] <= TARGETS["noop_s"],
        "one_changed_s": results["one_changed_s"] <= TARGETS["one_changed_s"]
        and set(one_ran) <= {f"score@r{changed:02d}"} | AGGREGATE,
        "lock_lines_per_run": results["lock_lines_per_run"] <= TARGETS["lock_lines_per_run"],
    }
    results["targets_met"] = met
    print(f"fresh dvc repro      {fresh:7.2f} s ({len(ran)} stages; median of "
          f"{', '.join(f'{s:.2f}' for s in freshes)})   official loop "
          f"{official_s:6.2f} s (median of {', '.join(f'{s:.2f}' for s in official)})   ratio "
          f"{results['fresh_ratio']:.2f} (<= {TARGETS['fresh_ratio']})   "
          f"{'met' if met['fresh_ratio'] else 'MISSED'}")
    print(f"no-op dvc repro      {results['noop_s']:7.2f} s (median of "
          f"{', '.join(f'{s:.2f}' for s in noop)}; <= {TARGETS['noop_s']})   "
          f"{'met' if met['noop_s'] else 'MISSED'}")
    print(f"one run changed      {one:7.2f} s (median of {', '.join(f'{s:.2f}' for s in ones)}),"
          f" ran {one_ran} (<= {TARGETS['one_changed_s']})   "
          f"{'met' if met['one_changed_s'] else 'MISSED'}")
    print(f"dvc.lock             {lock_lines} lines, {results['lock_lines_per_run']} per run "
          f"(<= {TARGETS['lock_lines_per_run']})   "
          f"{'met' if met['lock_lines_per_run'] else 'MISSED'}")
    print(f"official numbers     {differ} of {args.runs} runs differ from the official path")
    print(f"ruamel.yaml.clib     {'installed' if clib else 'missing'}")
    print(f"load average         {results['load_average_start_end'][0]} at the start, "
          f"{results['load_average_start_end'][1]} at the end (1, 5, 15 min; 2 vCPUs)")
    for key in ("profile_fresh", "profile_noop", "profile_one_changed"):
        prof = results[key]
        if prof is None:
            continue
        print(f"{key}: DVC process {prof['total_s']} s, waiting on stage commands "
              f"{prof['waiting_on_commands_s']} s, YAML {prof['yaml_parsing_s']} s; top own "
              f"time: " + ", ".join(f"{n} {t}" for n, t in prof["top_own_time"][:5]))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if tmp is not None:
        tmp.cleanup()
    return 0 if all(met.values()) and differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
