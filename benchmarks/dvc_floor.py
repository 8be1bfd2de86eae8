"""DVC's own floor under this pipeline: the same project with every stage's command a stub.

    flock /tmp/skillret-bench.lock python benchmarks/dvc_floor.py [--runs 30] [--json F]

Builds the 30-run project of benchmarks/pipeline_scale.py (SkillRet-sized TREC runs registered
with ``skillret-eval register``, the sample's fused run and aggregate stages), then a second
clone of it (the same data, hard-linked) whose dvc.yaml is the same in every stage's deps, outs,
params, metrics and plots, but whose commands are a stub (``floor_stub.py``, no import beyond
the standard library): it writes each of the stage's outputs with a digest of what its real
command reads, so a stage's outputs change when, and only when, the real ones would. Every
stage the real pipeline runs, the stub pipeline runs too (checked), and DVC does the same work
around it: hashing deps and outs, the lock, the rwlock, params.yaml.

Then, interleaved on the two clones (the machine's speed moves by 20-30% from one minute to the
next): a no-op ``dvc repro`` (``--repeat`` times, 5) and one run rewritten, then ``dvc repro``
(its stage and the stages over every run; ``--repeat`` times). Also DVC on an empty project
(``dvc repro`` with no stage): its start alone. Medians; prints a table, writes JSON (``--json``).
``--per-run-params`` adds a third clone, the stub pipeline with ``run_options.<run>`` listed as a
param of each ``score@<run>`` (the shape before 69b6eec), measured interleaved with the others.

What it tells: the part of pipeline_scale.py's no-op and one-changed figures that is DVC's
(the stub's) and the part that is the commands' (the difference). #20's targets (no-op <= 2.0 s,
one changed run <= 5 s) cannot be met on a machine where the stub pipeline alone misses them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import pipeline_scale as scale  # noqa: E402

#: the outputs that are folders (checked against the real project's)
DIRECTORY_OUTS = {"reports/queries", "reports/run_settings"}


# The stub every stage runs in the floor project. Sources: the files a stage's real command
# reads (its deps; a folder: the files in it); fuse_inputs@NAME reads only its own runs'
# canonical files (params.yaml's fuse.NAME.runs, copied to floor_fuse.json), as the real stage
# does. A source counts by its path, size and modification time: reading SkillRet-sized runs
# would be the command's work, not DVC's.
STUB = '''"""A stage's stand-in: outputs from a digest of its sources (benchmarks/dvc_floor.py)."""
import hashlib, os, sys
args = sys.argv[1:]
cut = args.index("--outs")
sources, outs = args[:cut], args[cut + 1:]
if sources[:1] == ["--fuse"]:  # floor_fuse.json: params.yaml's fuse.NAME.runs, by NAME
    import json
    runs = json.load(open("floor_fuse.json"))[sources[1]]
    sources = ["outputs/runs/%s.parquet" % run for run in runs]
digest = hashlib.sha256()
for source in sources:
    paths = [source]
    if os.path.isdir(source):
        paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(source) for f in fs)
    for path in paths:
        st = os.stat(path)
        digest.update(("%s %d %d\\n" % (path, st.st_size, st.st_mtime_ns)).encode())
text = digest.hexdigest() + "\\n"
targets = []
for out in outs:  # a folder (ends with /): stub.txt, and the files floor_files.json names in it
    if out.endswith("/"):
        import json
        names = (json.load(open("floor_files.json")).get(out.rstrip("/"), [])
                 if os.path.exists("floor_files.json") else [])
        targets += [out + name for name in ["stub.txt", *names]]
    else:
        targets.append(out)
for target in targets:
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    with open(target + ".tmp", "w") as f:
        f.write(target + " " + text)
    os.replace(target + ".tmp", target)
'''


def _paths(entries: list | None) -> list[str]:
    """The paths of a stage's deps/outs/metrics/plots list (a path, or {path: options})."""
    return [e if isinstance(e, str) else next(iter(e)) for e in entries or []]


def stub_pipeline(pipeline: dict, directories: set[str]) -> dict:
    """``pipeline`` (dvc.yaml, loaded) with every stage's command replaced by the stub; all else
    the same. ``directories``: the outputs that are folders (as resolved paths or templates)."""
    result = json.loads(json.dumps(pipeline))
    for name, stage in result["stages"].items():
        body = stage.get("do", stage)
        outs = [p + "/" if p in directories else p
                for key in ("outs", "metrics", "plots") for p in _paths(body.get(key))]
        sources = (["--fuse", "${key}"] if name == "fuse_inputs" else _paths(body.get("deps")))
        body["cmd"] = " ".join(["python", "floor_stub.py", *[f"'{s}'" for s in sources],
                                "--outs", *[f"'{o}'" for o in outs]])
    return result


def floor_project(real: Path, floor: Path, per_run_params: bool = False) -> None:
    """``floor``: a fresh clone of the project, committed with the stub's dvc.yaml; its data
    hard-linked from ``real``'s (so rewriting a run there rewrites it here too).
    ``per_run_params``: each ``score@<run>`` also lists ``run_options.<run>`` as a param."""
    scale.another_clone(real.parent / "origin", real, floor)
    pipeline = stub_pipeline(yaml.safe_load((floor / "dvc.yaml").read_text()), DIRECTORY_OUTS)
    if per_run_params:
        pipeline["stages"]["score"]["do"]["params"] = ["run_options.${key}"]
    (floor / "dvc.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    (floor / "floor_stub.py").write_text(STUB)
    params = yaml.safe_load((floor / "params.yaml").read_text())
    (floor / "floor_fuse.json").write_text(json.dumps(
        {name: spec["runs"] for name, spec in (params.get("fuse") or {}).items()}) + "\n")
    # the files other stages depend on inside a folder output: each run's settings
    (floor / "floor_files.json").write_text(json.dumps(
        {"reports/run_settings": [f"{run}.json" for run in params["runs"]]}) + "\n")
    scale.sh(floor, "git", "add", "-A")
    scale.sh(floor, "git", "commit", "-qm", "the stub pipeline")


def empty_project(folder: Path) -> None:
    folder.mkdir(parents=True)
    scale.sh(folder, "git", "init", "-q", "-b", "main")
    scale.sh(folder, sys.executable, "-m", "dvc", "init", "-q")
    scale.sh(folder, sys.executable, "-m", "dvc", "config", "core.analytics", "false")
    (folder / "dvc.yaml").write_text("stages: {}\n")
    scale.sh(folder, "git", "add", "-A")
    scale.sh(folder, "git", "commit", "-qm", "empty")


def repro(folder: Path) -> tuple[float, list[str]]:
    seconds, result = scale.dvc(folder, "repro")
    return seconds, scale.stages_run(result.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--per-run-params", action="store_true",
                        help="also the stub pipeline whose score@<run> stages list "
                             "run_options.<run> as a param (the shape before 69b6eec)")
    parser.add_argument("--keep", type=Path, help="build the projects here and keep them")
    parser.add_argument("--json", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="skillret-floor-")
    base = args.keep or Path(tmp.name)
    for old in ("origin", "project", "floor", "floor_params", "empty"):
        shutil.rmtree(base / old, ignore_errors=True)
    origin, real = base / "origin", base / "project"
    projects = {"real": real, "floor": base / "floor"}
    if args.per_run_params:
        projects["floor_params"] = base / "floor_params"
    origin.mkdir(parents=True)
    load_start = [round(x, 2) for x in os.getloadavg()]
    scale.write_data(origin, args.runs)
    scale.make_project(origin, real, args.runs)
    for name, folder in projects.items():
        if name != "real":
            floor_project(real, folder, per_run_params=name == "floor_params")
    empty_project(base / "empty")

    fresh = {}
    for name, folder in projects.items():
        fresh[name] = repro(folder)
        scale.sh(folder, "git", "add", "-A")
        scale.sh(folder, "git", "commit", "-qm", "repro")
        assert fresh[name][1] == fresh["real"][1], fresh  # the same stages, in the same order
    lock = yaml.safe_load((real / "dvc.lock").read_text())
    assert DIRECTORY_OUTS == {out["path"] for stage in lock["stages"].values()
                              for out in stage.get("outs", []) if (real / out["path"]).is_dir()}

    times: dict[str, list[float]] = {"empty": []}
    for _ in range(args.repeat):
        times["empty"].append(repro(base / "empty")[0])
        for name, folder in projects.items():
            seconds, ran = repro(folder)
            assert not ran, ran
            times.setdefault(f"noop_{name}", []).append(seconds)
    ran_one, changed = {}, min(7, args.runs - 1)  # the run pipeline_scale.py rewrites
    for variant in range(1, args.repeat + 1):
        scale.write_data(real, args.runs, variant=variant, only=changed)  # every clone's file
        for name, folder in projects.items():
            seconds, ran = repro(folder)
            ran_one.setdefault(name, ran)
            assert ran == ran_one[name] == ran_one["real"], (name, ran)
            times.setdefault(f"one_{name}", []).append(seconds)

    med = {key: round(statistics.median(values), 2) for key, values in times.items()}
    results = {
        "runs": args.runs, "repeat": args.repeat,
        "load_average_start_end": [load_start, [round(x, 2) for x in os.getloadavg()]],
        "stages": len(fresh["real"][1]), "one_changed_stages": ran_one["real"],
        "fresh_s": {name: round(seconds, 2) for name, (seconds, _) in fresh.items()},
        "median_s": med, "all_s": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "targets": {"noop_s": scale.TARGETS["noop_s"],
                    "one_changed_s": scale.TARGETS["one_changed_s"]},
    }
    labels = {"real": "real commands", "floor": "stub commands",
              "floor_params": "stub, per-run params"}
    print(f"{args.runs} runs, {results['stages']} stages; medians of {args.repeat}")
    print(f"{'dvc repro':34}" + "".join(f"{labels[name]:>22}" for name in projects))
    print(f"{'no stage at all (empty project)':34}{med['empty']:20.2f} s")
    rows = [("fresh", {n: results["fresh_s"][n] for n in projects}),
            (f"no-op (target {scale.TARGETS['noop_s']} s)",
             {n: med[f"noop_{n}"] for n in projects}),
            (f"one run changed (target {scale.TARGETS['one_changed_s']} s)",
             {n: med[f"one_{n}"] for n in projects})]
    for label, values in rows:
        print(f"{label:34}" + "".join(f"{values[n]:20.2f} s" for n in projects))
    print(f"one run changed ran: {', '.join(ran_one['real'])}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
