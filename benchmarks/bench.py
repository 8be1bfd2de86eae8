"""Benchmark: ``skillret-eval score`` against the official path and ranx, as whole processes.

Run it from the repository root, in an environment with ``pip install -e ".[bench]"``::

    python benchmarks/bench.py                          # small + large, 3 timed runs each
    python benchmarks/bench.py --scales small --repeat 5 --json /tmp/bench.json
    python benchmarks/bench.py --huge                   # also 100M rows (skillret only, ~7 GB)
    python benchmarks/bench.py --cprofile large         # also cProfile skillret at that scale

What it measures, per scale (SkillRet-shaped TREC data from ``datagen.py``, cached in
``benchmarks/.data/``, git-ignored):

- ``skillret``: ``skillret-eval score --profile official --output out.json -q``;
- ``official``: ``official_path.py``, the way SkillRet users evaluate: TREC files read into dicts
  with ``line.split()``, then SkillRet's ``trec_eval`` (pytrec_eval at 5/10/15);
- ``ranx``: ``ranx_path.py``: ``Qrels/Run.from_file`` + ``evaluate`` (no Completeness in ranx).

Each contender is a separate process: one warm-up run (not counted; it warms the file-system
cache and ranx's numba cache), then ``--repeat`` timed runs, round-robin; medians are reported.
Wall time is ``time.perf_counter`` from spawn to exit. Peak RSS is the kernel's resident-memory
high-water mark of the process, read by GNU time (``/usr/bin/time -f %M``, the "Maximum resident
set size" of ``-v``) or, without GNU time, by a bare Python launcher (``RUSAGE_CHILDREN``; its
own ~10 MB becomes the floor). It is not read from this process's own children: Linux keeps the
high-water mark across exec, so they would inherit the benchmark's memory.

skillret's metrics must equal the official path's exactly (exit status 1 if not, or if a
contender fails); ranx's deviations are only reported. Targets (PASS/MISS) never change the
exit status.

Scales: small = 4,392 queries x 100 (439k rows, SkillRet's test split size), large = 100,000 x
100 (10M rows), huge (``--huge``) = 1,000,000 x 100 (100M rows, plain and gzip). The official
path and ranx are not run at huge: the official path's dicts would need ~25 GB (ten times its
2.5 GB peak at 10M rows).

Also measured: start-up (``python -X importtime -c "import skillret.cli"`` and
``skillret-eval --help`` as a whole process, median of 5) and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pstats
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path

import datagen

HERE = Path(__file__).resolve().parent
SCALES = {"small": 4_392, "large": 100_000, "huge": 1_000_000}
# (scale, contender, quantity, limit): ratio quantities are skillret / official.
TARGETS = [
    ("small", "skillret", "wall ratio", 0.6),
    ("large", "skillret", "wall ratio", 0.15),
    ("large", "skillret", "RSS ratio", 0.5),
    ("huge", "skillret", "RSS MiB", 4096),
    ("huge", "skillret-gzip", "RSS MiB", 4096),
]
HEAVY_MODULES = ("numpy", "pyarrow", "pandas", "yaml", "pytrec_eval")


# --- running a process --------------------------------------------------------------------

GNU_TIME = "/usr/bin/time"
# Fallback when GNU time is missing: a bare Python launcher that reports its child's peak RSS.
LAUNCHER = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[2:]); "
            "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN)"
            ".ru_maxrss)); sys.exit(rc)")


def rss_wrapper(rss_file: str) -> list[str]:
    """The command prefix that writes the peak RSS (KiB) of what follows to ``rss_file``.

    Peak RSS must not be read from the benchmark's own children: Linux keeps a process's RSS
    high-water mark across exec, so a child forked from this (large) process would inherit
    our peak. GNU time and the launcher are small processes that fork the measured command.
    """
    if os.access(GNU_TIME, os.X_OK):
        return [GNU_TIME, "-f", "%M", "-o", rss_file]
    return [sys.executable, "-c", LAUNCHER, rss_file]


def measure(argv: list[str], timeout: float) -> dict:
    """Run ``argv`` to completion: wall seconds, peak RSS (MiB), exit status, stderr tail."""
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "rss")
        err_file = os.path.join(tmp, "stderr")
        with open(err_file, "wb") as err:
            start = time.perf_counter()
            returncode = run_group(rss_wrapper(rss_file) + argv, err, timeout)
            wall = time.perf_counter() - start
        stderr = Path(err_file).read_text(errors="replace")
        rss_text = Path(rss_file).read_text().split() if os.path.exists(rss_file) else []
    rss_kib = next((int(tok) for tok in reversed(rss_text) if tok.isdigit()), None)
    return {"wall_s": round(wall, 3), "rss_mib": round(rss_kib / 1024, 1) if rss_kib else None,
            "returncode": returncode, "stderr": stderr[-2000:]}


def run_group(argv: list[str], err, timeout: float) -> int | str:
    """Exit status of ``argv`` (in its own process group, all killed on timeout).

    The wait blocks in ``waitpid`` and a timer thread enforces the timeout:
    ``Popen.wait(timeout=...)`` polls instead, sleeping up to 50 ms between polls, which added
    0-50 ms to every measured process (wall times came out in steps of 50 ms: 0.267, 0.315,
    0.365 s), a bias that weighs most on the shortest processes."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    expired = threading.Event()

    def kill():
        expired.set()
        os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        returncode = proc.wait()
    finally:
        timer.cancel()
    return "timeout" if expired.is_set() else returncode


def skillret_argv(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("skillret-eval")
    base = [str(script)] if script.exists() else [sys.executable, "-m", "skillret.cli"]
    return base + list(args)


def score_args(qrels: str, run: str, output: Path) -> list[str]:
    return ["score", "--qrels", qrels, "--run", run, "--profile", "official",
            "--output", str(output), "-q"]


# --- contenders -----------------------------------------------------------------------------

def contenders(scale: str, data: dict, outdir: Path, skip: frozenset = frozenset()
               ) -> dict[str, dict]:
    """name -> {argv, output} for one scale (``skip``: contenders left out)."""
    outdir.mkdir(parents=True, exist_ok=True)
    runs = {"skillret": data["run"]}
    if scale == "huge":
        runs["skillret-gzip"] = data["run_gz"]
    specs = {}
    for name, run in runs.items():
        out = outdir / f"{name}.json"
        specs[name] = {"argv": skillret_argv(*score_args(data["qrels"], run, out)),
                       "output": str(out)}
    if scale != "huge":
        for name, script in (("official", "official_path.py"), ("ranx", "ranx_path.py")):
            if name in skip:
                continue
            out = outdir / f"{name}.json"
            specs[name] = {"argv": [sys.executable, str(HERE / script), data["qrels"],
                                    data["run"], str(out)], "output": str(out)}
    return specs


def run_once(spec: dict, timeout: float) -> dict:
    """One measured run; the output is removed first so a stale file is never checked."""
    Path(spec["output"]).unlink(missing_ok=True)
    return measure(spec["argv"], timeout)


def run_contenders(scale: str, specs: dict[str, dict], repeat: int, timeout: float) -> None:
    """Warm-up, then ``repeat`` round-robin timed runs; results go into ``specs``."""
    for name, spec in specs.items():
        spec["warmup"] = run_once(spec, timeout)
        spec["runs"] = []
        report_run(scale, name, "warm-up", spec["warmup"])
    for i in range(repeat):
        for name, spec in specs.items():
            if spec["warmup"]["returncode"] != 0:
                continue
            result = run_once(spec, timeout)
            spec["runs"].append(result)
            report_run(scale, name, f"run {i + 1}/{repeat}", result)
    for spec in specs.values():
        ok = [r for r in spec["runs"] if r["returncode"] == 0]
        spec["ok"] = bool(ok) and len(ok) == len(spec["runs"])
        spec["wall_median_s"] = median(ok, "wall_s", 3)
        spec["rss_median_mib"] = median(ok, "rss_mib", 1)


def median(runs: list[dict], key: str, digits: int) -> float | None:
    return round(statistics.median(r[key] for r in runs), digits) if runs else None


def report_run(scale: str, name: str, label: str, result: dict) -> None:
    status = "" if result["returncode"] == 0 else f"  EXIT {result['returncode']}"
    print(f"  {scale:<6} {name:<14} {label:<9} {result['wall_s']:9.2f} s "
          f"{fmt(result['rss_mib'], '9.1f', '        ?')} MiB{status}", flush=True)
    if result["returncode"] != 0:
        print("    stderr: " + result["stderr"].strip().replace("\n", "\n    stderr: "),
              flush=True)


# --- checking the numbers ---------------------------------------------------------------------

def load_metrics(spec: dict, key: str | None = None) -> dict | None:
    if not spec.get("ok"):
        return None
    data = json.loads(Path(spec["output"]).read_text())
    return data.get(key) if key else data


def check_numbers(specs: dict[str, dict]) -> dict:
    """skillret == official exactly; ranx's deviations from official; gzip == plain."""
    checks: dict = {}
    sk = load_metrics(specs["skillret"], "official")
    if "official" in specs:
        off = load_metrics(specs["official"])
        checks["skillret_vs_official"] = compare_exact(sk, off)
    if "ranx" in specs and "official" in specs:
        checks["ranx_vs_official"] = ranx_deviation(load_metrics(specs["ranx"]),
                                                    load_metrics(specs["official"]))
    if "skillret-gzip" in specs:
        checks["gzip_vs_plain"] = compare_exact(load_metrics(specs["skillret-gzip"], "official"),
                                                sk)
    return checks


def compare_exact(mine: dict | None, reference: dict | None) -> dict:
    if mine is None or reference is None:
        return {"equal": False, "reason": "a contender failed"}
    diffs = {k: [mine.get(k), reference.get(k)] for k in set(mine) | set(reference)
             if mine.get(k) != reference.get(k)}
    return {"equal": not diffs and len(reference) == 15, "keys": len(reference),
            "same_key_order": list(mine) == list(reference), "differences": diffs}


def ranx_deviation(ranx: dict | None, official: dict | None) -> dict:
    """|round(ranx, 5) - official| per metric ranx has (the official numbers are rounded)."""
    if ranx is None or official is None:
        return {"reason": "a contender failed"}
    diffs = {k: round(abs(round(v, 5) - official[k]), 6) for k, v in ranx.items()}
    return {"max_abs_diff": max(diffs.values()), "per_metric": diffs,
            "not_in_ranx": sorted(set(official) - set(ranx))}


# --- targets and the table --------------------------------------------------------------------

def add_ratios(specs: dict[str, dict]) -> None:
    off = specs.get("official")
    for spec in specs.values():
        ok = off and off.get("ok") and spec.get("ok")
        spec["wall_ratio"] = round(spec["wall_median_s"] / off["wall_median_s"], 3) if ok else None
        spec["rss_ratio"] = round(spec["rss_median_mib"] / off["rss_median_mib"], 3) if ok else None


def evaluate_targets(results: dict[str, dict]) -> list[dict]:
    out = []
    for scale, name, quantity, limit in TARGETS:
        spec = results.get(scale, {}).get("contenders", {}).get(name)
        if spec is None:
            continue
        value = {"wall ratio": spec.get("wall_ratio"), "RSS ratio": spec.get("rss_ratio"),
                 "RSS MiB": spec.get("rss_median_mib")}[quantity]
        status = "MISS" if value is None or value > limit else "PASS"
        out.append({"scale": scale, "contender": name, "quantity": quantity, "limit": limit,
                    "value": value, "status": status})
    return out


def fmt(value, pattern: str, missing: str = "-") -> str:
    return missing if value is None else format(value, pattern)


def print_table(results: dict[str, dict], targets: list[dict]) -> None:
    header = (f"{'scale':<6} {'rows':>12} {'contender':<14} {'wall med (s)':>12} "
              f"{'peak RSS med (MiB)':>19} {'wall/official':>14} {'RSS/official':>13}")
    print("\n" + header + "\n" + "-" * len(header))
    for scale, res in results.items():
        for name, spec in res["contenders"].items():
            wall = fmt(spec["wall_median_s"], ".2f", "FAILED")
            print(f"{scale:<6} {res['rows']:>12,} {name:<14} {wall:>12} "
                  f"{fmt(spec['rss_median_mib'], '.0f', 'FAILED'):>19} "
                  f"{fmt(spec['wall_ratio'], '.3f'):>13}x {fmt(spec['rss_ratio'], '.3f'):>12}x")
    print("\nTargets (skillret vs the official path; huge: absolute):")
    for t in targets:
        limit = f"<= {t['limit']}x" if "ratio" in t["quantity"] else f"<= {t['limit']} MiB"
        print(f"  {t['scale']:<6} {t['contender']:<14} {t['quantity']:<11} {limit:<14} "
              f"got {fmt(t['value'], '.3f' if 'ratio' in t['quantity'] else '.0f')}: "
              f"{t['status']}")


def print_checks(results: dict[str, dict]) -> None:
    print("\nNumbers:")
    for scale, res in results.items():
        checks = res["checks"]
        if "skillret_vs_official" in checks:
            c = checks["skillret_vs_official"]
            verdict = "EQUAL (all 15 keys)" if c["equal"] else f"DIFFERENT {c}"
            print(f"  {scale:<6} skillret vs official: {verdict}")
        if "gzip_vs_plain" in checks:
            c = checks["gzip_vs_plain"]
            print(f"  {scale:<6} skillret gzip vs plain: {'EQUAL' if c['equal'] else c}")
        if "ranx_vs_official" in checks:
            c = checks["ranx_vs_official"]
            if "max_abs_diff" not in c:
                print(f"  {scale:<6} ranx vs official: {c['reason']}")
                continue
            worst = sorted(c["per_metric"].items(), key=lambda kv: -kv[1])[:4]
            print(f"  {scale:<6} ranx vs official (ranx rounded to 5): max |diff| "
                  f"{c['max_abs_diff']:.5f}; largest: "
                  + ", ".join(f"{k} {v:.5f}" for k, v in worst)
                  + "; ranx has no Completeness")


# --- start-up, machine, profile ---------------------------------------------------------------

def startup(timeout: float, n: int = 5) -> dict:
    """Import time of skillret.cli (-X importtime) and ``skillret-eval --help`` wall time."""
    totals, heavy = [], set()
    for _ in range(n):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import skillret.cli"],
                              capture_output=True, text=True, timeout=timeout)
        rows = re.findall(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", proc.stderr)
        totals += [int(cum) for _, cum, _, name in rows if name == "skillret.cli"]
        heavy |= {name for *_, name in rows if name.split(".")[0] in HEAVY_MODULES}
    measure(skillret_argv("--help"), timeout)  # warm-up
    helps = [measure(skillret_argv("--help"), timeout) for _ in range(n)]
    return {"import_skillret_cli_ms": round(statistics.median(totals) / 1000, 1),
            "heavy_modules_imported": sorted(heavy),
            "help_wall_s": round(statistics.median(h["wall_s"] for h in helps), 3),
            "help_rss_mib": round(statistics.median(h["rss_mib"] for h in helps), 1)}


def byte_compile() -> None:
    """Byte-compile skillret and the reference, as a regular ``pip install`` does for every
    package. An editable install under PYTHONDONTWRITEBYTECODE=1 (set on some machines) would
    otherwise recompile skillret's modules at every start: about 40 ms a process, which the
    official path, all of whose modules come compiled from site-packages, never pays."""
    import compileall
    root = HERE.parent
    compileall.compile_dir(str(root / "skillret"), quiet=1)
    compileall.compile_file(str(root / "tests" / "reference.py"), quiet=1)


def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    model = re.search(r"model name\s*:\s*(.*)", cpuinfo)
    mem = re.search(r"MemTotal:\s*(\d+) kB", meminfo)
    versions = {}
    for dist in ("skillret-eval", "numpy", "pyarrow", "pandas", "pytrec-eval-terrier", "ranx",
                 "numba"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {"cpu": model.group(1).strip() if model else platform.processor(),
            "cores": os.cpu_count(),
            "ram_gib": round(int(mem.group(1)) / 2**20, 1) if mem else None,
            "os": platform.platform(), "python": platform.python_version(),
            "versions": versions, "commit": git_commit()}


def git_commit() -> str | None:
    try:
        head = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--",
                                "../skillret"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}{' (skillret/ modified)' if dirty else ''}" if head else None


def cprofile(data: dict, profile_path: Path, timeout: float, top: int = 15) -> dict:
    """skillret under cProfile (``python -m cProfile -o ... -m skillret.cli score ...``)."""
    out = profile_path.with_suffix(".json")
    argv = [sys.executable, "-m", "cProfile", "-o", str(profile_path), "-m", "skillret.cli",
            *score_args(data["qrels"], data["run"], out)]
    result = measure(argv, timeout)
    entries = []
    if result["returncode"] == 0:
        stats = pstats.Stats(str(profile_path)).stats
        ranked = sorted(stats.items(), key=lambda item: -item[1][3])
        imports = next((ct for (file, _, func), (_, _, _, ct, _) in ranked
                        if func == "_find_and_load"), 0.0)
        entries = [e for e in entries_of(dict(ranked))
                   if not boilerplate(*e["function"].rsplit(":", 1))][:top]
        by_self = sorted(entries_of(stats), key=lambda e: -e["tottime_s"])[:10]
    return {"argv": argv, "profile": str(profile_path), "wall_s": result["wall_s"],
            "returncode": result["returncode"], "stderr": result["stderr"],
            "imports_s": round(imports, 3) if entries else None, "top": entries,
            "top_self": by_self if entries else []}


def entries_of(stats: dict) -> list[dict]:
    return [{"function": f"{short_path(file)}:{line}({func})", "calls": nc,
             "tottime_s": round(tt, 3), "cumtime_s": round(ct, 3)}
            for (file, line, func), (_, nc, tt, ct, _) in stats.items()]


def boilerplate(file: str, where: str) -> bool:
    """Frames every profile starts with (runpy, exec, importlib): left out of the top list."""
    return (file.startswith("<frozen") or file == "<string>"
            or where.endswith(("(<built-in method builtins.exec>)", "(<module>)")))


def short_path(file: str) -> str:
    """A profile entry's file, from its package (or the standard library) down."""
    for pattern in (r"/(?=skillret/)", r"site-packages/", r"lib/python3\.\d+/"):
        match = re.search(pattern, file)
        if match:
            return file[match.end():]
    return file


def print_cprofile(prof: dict) -> None:
    print(f"\ncProfile of skillret ({prof['wall_s']:.1f} s under the profiler; "
          f"{prof['profile']}); imports took {fmt(prof['imports_s'], '.2f')} s; top "
          f"{len(prof['top'])} by cumulative time (runpy/exec/importlib frames left out):")
    if prof["returncode"] != 0:
        print(f"  failed with exit {prof['returncode']}: {prof['stderr'].strip()}")
    for e in prof["top"]:
        print_entry(e)
    if prof["top_self"]:
        print("Top 10 by self time (cProfile sees the main thread only: time it waits for a "
              "reader thread shows as lock acquire):")
    for e in prof["top_self"]:
        print_entry(e)


def print_entry(e: dict) -> None:
    print(f"  {e['cumtime_s']:9.2f} s cum {e['tottime_s']:9.2f} s self "
          f"{e['calls']:>9} calls  {e['function']}")


# --- main -------------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scales", default="small,large",
                   help="comma-separated scales among small, large, huge (default small,large)")
    p.add_argument("--huge", action="store_true", help="add the huge scale (100M rows)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per contender (default 3)")
    p.add_argument("--json", metavar="PATH", help="write all measurements as JSON")
    p.add_argument("--seed", type=int, default=20250601, help="data seed")
    p.add_argument("--data-dir", type=Path, default=HERE / ".data",
                   help="where generated data is cached (default benchmarks/.data)")
    p.add_argument("--queries", action="append", default=[], metavar="SCALE=N",
                   help="override a scale's query count (smoke tests), e.g. huge=20000")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per process")
    p.add_argument("--skip", action="append", default=[], choices=["ranx"],
                   help="leave a contender out (ranx takes ~80 s a run at 10M rows)")
    p.add_argument("--cprofile", metavar="SCALE",
                   help="also profile skillret at this scale (profile written to the temp dir)")
    args = p.parse_args(argv)
    wanted = [s for s in args.scales.split(",") if s] + (["huge"] if args.huge else [])
    args.scale_list = list(dict.fromkeys(wanted))  # each scale once
    args.sizes = dict(SCALES)
    for item in args.queries:
        name, _, n = item.partition("=")
        args.sizes[name] = int(n)
    unknown = set(args.scale_list) - set(args.sizes)
    if unknown or args.repeat < 1:
        p.error(f"unknown scale(s) {sorted(unknown)}" if unknown else "--repeat must be >= 1")
    return args


def bench_scale(scale: str, args: argparse.Namespace) -> dict:
    data = datagen.ensure_dataset(args.data_dir, scale, args.sizes[scale], args.seed,
                                  gzip_copy=scale == "huge")
    print(f"\n[{scale}] {datagen.describe(data)}", flush=True)
    if scale == "huge":
        print("  (official path and ranx not run at this scale: the official path's dicts "
              "would need ~25 GB, ten times its peak at 10M rows)", flush=True)
    outdir = args.data_dir / "out" / scale
    specs = contenders(scale, data, outdir, frozenset(args.skip))
    run_contenders(scale, specs, args.repeat, args.timeout)
    add_ratios(specs)
    return {"queries": data["queries"], "rows": data["rows"], "judgments": data["judgments"],
            "data": {k: data[k] for k in ("qrels", "run", "run_bytes", "generation_seconds")},
            "contenders": specs, "checks": check_numbers(specs)}


def _missing_contenders() -> list[str]:
    """The bench extra's packages this environment lacks (the contenders need them)."""
    import importlib.util
    return [dist for dist, module in (("pytrec-eval-terrier", "pytrec_eval"), ("ranx", "ranx"))
            if importlib.util.find_spec(module) is None]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    missing = _missing_contenders()
    if missing:
        print(f"bench.py: error: the contenders need {', '.join(missing)}: "
              f"pip install -e \".[bench]\"", file=sys.stderr)
        return 2
    started = time.perf_counter()
    info = machine()
    print(f"Machine: {info['cpu']}, {info['cores']} cores, {info['ram_gib']} GiB RAM; "
          f"Python {info['python']}; " + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
          + f"; commit {info['commit']}")
    meter = ("GNU time's %M (Maximum resident set size)" if os.access(GNU_TIME, os.X_OK)
             else "a Python launcher's RUSAGE_CHILDREN ru_maxrss (floor ~10 MB)")
    print(f"Timing: wall = perf_counter from spawn to exit; peak RSS = {meter}. One warm-up "
          f"run, then {args.repeat} timed runs per contender, round-robin; medians.", flush=True)
    byte_compile()
    start_info = startup(args.timeout)
    print(f"Start-up: import skillret.cli {start_info['import_skillret_cli_ms']} ms "
          f"(-X importtime, median of 5; heavy modules imported: "
          f"{', '.join(start_info['heavy_modules_imported']) or 'none'}); "
          f"skillret-eval --help {start_info['help_wall_s']:.3f} s wall, "
          f"{start_info['help_rss_mib']:.0f} MiB (median of 5)", flush=True)
    results = {scale: bench_scale(scale, args) for scale in args.scale_list}
    targets = evaluate_targets(results)
    print_table(results, targets)
    print_checks(results)
    prof = None
    if args.cprofile:
        data = datagen.ensure_dataset(args.data_dir, args.cprofile, args.sizes[args.cprofile],
                                      args.seed)
        prof = cprofile(data, Path(tempfile.gettempdir()) / f"skillret-bench-{args.cprofile}.prof",
                        args.timeout)
        print_cprofile(prof)
    total = round(time.perf_counter() - started, 1)
    print(f"\nTotal benchmark time: {total} s")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"machine": info, "startup": start_info, "repeat": args.repeat, "seed": args.seed,
             "scales": results, "targets": targets, "cprofile": prof, "total_s": total},
            indent=2) + "\n")
        print(f"Measurements written to {args.json}")
    return 0 if all_good(results) else 1


def all_good(results: dict[str, dict]) -> bool:
    for res in results.values():
        if not all(spec["ok"] for spec in res["contenders"].values()):
            return False
        for name in ("skillret_vs_official", "gzip_vs_plain"):
            if name in res["checks"] and not res["checks"][name]["equal"]:
                return False
    return True


if __name__ == "__main__":
    sys.exit(main())
