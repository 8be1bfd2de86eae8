"""The `fuse` section of `params.yaml`, checked, and each fused run it names written.

A fused run's runs are registered or fused runs. Everything is checked before anything is read.
"""

from __future__ import annotations

import contextlib
import graphlib
import os
import sys
import tempfile
from pathlib import Path

from skillret.analysis.fusion import DEFAULT_DEPTH, DEFAULT_K, Fusion, run_names, write_fusion
from skillret.errors import ConfigError, InputError
from skillret.io.atomic import atomic_path, write_json
from skillret.io.hashing import sha256
from skillret.io.readers import RunSource, open_run, run_name
from skillret.io.write_runs import run_format
from skillret.pipeline import layout
from skillret.pipeline.params import check_name, keyed, load_yaml, mapping, stage_runs

FUSE_KEYS = ("method", "runs", "k", "norm", "weights", "depth")


def fuse_to_file(runs, output: str | os.PathLike, fusion: Fusion, *, tag: str | None = None,
                 notices: list[str] | None = None, atomic: bool = True) -> dict:
    """Fuse `runs` (`{name: path | RunSource}` or a list of paths) into `output` (format by
    extension); returns counts. `atomic=False` writes in place (an intermediate read at once)."""
    names, paths = run_names(runs)
    fusion.weight_vector(names)
    run_format(output)
    for path in paths:
        file = path.path if isinstance(path, RunSource) else path
        if not os.path.exists(file):
            raise InputError(file, "no such run file")
    with (atomic_path(output) if atomic else contextlib.nullcontext(output)) as tmp:
        sources = {name: path if isinstance(path, RunSource) else open_run(path)
                   for name, path in zip(names, paths)}
        return write_fusion(fusion, sources, output, tmp, tag=tag or run_name(output),
                            notices=notices)


def fuse_section(params: dict, source: str) -> dict[str, tuple[Fusion, list[str]]]:
    """The checked `fuse` section: `{name: (Fusion, [run names])}`."""
    stage_runs(params, source)
    registered, section = params.get("runs") or {}, params.get("fuse") or {}
    plans, order = {}, graphlib.TopologicalSorter()
    for name, spec in section.items():
        where = f"{source}: fuse.{name}"
        if name in registered:
            raise ConfigError(f"{where}: {name!r} is already a registered run (runs.{name}); "
                              "give the fused run another name")
        spec = mapping(spec, f"fuse.{name}", source, FUSE_KEYS)
        runs = spec.get("runs")
        if (not isinstance(runs, list) or len(runs) < 2
                or not all(isinstance(r, str) for r in runs)):
            raise ConfigError(f"{where}: runs must list at least two run names")
        if len(set(runs)) != len(runs):
            raise ConfigError(f"{where}: a run is listed twice in runs")
        for run in runs:
            if run not in registered and run not in section:
                raise ConfigError(f"{where}: unknown run {run!r} (registered: "
                                  f"{', '.join(registered) or 'none'}; fused: "
                                  f"{', '.join(section)})")
        fusion = keyed(where, Fusion, spec.get("method", "rrf"), spec.get("k", DEFAULT_K),
                       spec.get("norm"), dict(spec.get("weights") or {}),
                       spec.get("depth", DEFAULT_DEPTH))
        keyed(where, fusion.weight_vector, runs)
        plans[name] = (fusion, runs)
        order.add(name)
        for run in runs:   # `name` first: a cycle is named in the order the runs are read
            if run in section:
                order.add(run, name)
    try:
        order.prepare()
    except graphlib.CycleError as exc:
        raise ConfigError(f"{source}: a cycle of fused runs: {' -> '.join(exc.args[1])}") \
            from None
    return plans


def _plans(path, name: str) -> tuple[dict, dict, list[str]]:
    """The params, the checked `fuse` section, and fused run `name` with the fused runs it
    reads (directly or not), each after its inputs."""
    params = load_yaml(path)
    plans = fuse_section(params, os.fspath(path))
    if name not in plans:
        raise ConfigError(f"{os.fspath(path)}: no fused run {name!r} under fuse "
                          f"({', '.join(plans) or 'none defined'})")
    chain: list[str] = []

    def visit(run: str) -> None:
        if run in plans and run not in chain:
            for each in plans[run][1]:
                visit(each)
            chain.append(run)

    visit(name)
    return params, plans, chain


def fuse_from_params(path: str | os.PathLike, name: str, output: str | os.PathLike, *,
                     run_pattern: str | None = None, notices: list[str] | None = None):
    """Write fused run `name` of a params file to `output`; returns (fusion, run names, counts).
    Registered runs are read from `run_pattern` (`{}`: the name), else `runs:`; fused inputs are
    made in a temporary folder first."""
    params, plans, chain = _plans(path, name)
    files = {run: run_pattern.replace("{}", run) if run_pattern
             else entry.get("path") if isinstance(entry, dict) else entry
             for run, entry in (params.get("runs") or {}).items()}
    with tempfile.TemporaryDirectory(prefix="skillret-fuse-") as tmp:
        for run in chain:   # inputs first; an intermediate is written in place, read at once
            files[run] = output if run == name else Path(tmp) / f"{run}.parquet"
            fusion, inputs = plans[run]
            counts = fuse_to_file({r: files[r] for r in inputs}, files[run], fusion, tag=run,
                                  notices=notices, atomic=run == name)
    return plans[name][0], plans[name][1], counts


def fuse_stage(name: str, params_path: str = layout.PARAMS) -> None:
    """Stage `fuse@<name>`: the fused run, written as TREC; its registered runs read from their
    canonical files."""
    notices: list[str] = []
    fuse_from_params(params_path, name, layout.FUSED_RUN.format(name),
                     run_pattern=layout.CANONICAL_RUN, notices=notices)
    for notice in notices:  # the fused run's line is score_fused@<name>'s
        print(f"fuse@{name}: note: {notice}", file=sys.stderr)


def fusion_inputs_stage(name: str, params_path: str = layout.PARAMS) -> dict:
    """Stage `fuse_inputs@<name>`: the fused run's settings (and its fused inputs') and the sha256
    of each registered run it reads. DVC cannot take a params list as a stage's deps, so
    `fuse@<name>` depends on this file instead."""
    _, plans, chain = _plans(params_path, check_name(name, "fused run"))
    fused, registered = {}, {}
    for current in chain:
        fusion, inputs = plans[current]
        fused[current] = {"method": fusion.method, "k": fusion.k, "norm": fusion.norm,
                          "weights": dict(sorted(fusion.weights.items())),
                          "depth": fusion.depth, "runs": list(inputs)}
        for run in inputs:
            if run not in plans and run not in registered:
                path = layout.CANONICAL_RUN.format(run)
                if not Path(path).is_file():
                    raise ConfigError(f"fuse.{name}: run {run!r} has no canonical file {path} "
                                      f"(its score@{run} stage writes it)")
                registered[run] = {"path": path, "sha256": sha256(path)}
    record = {"fused": dict(sorted(fused.items())), "registered": dict(sorted(registered.items()))}
    write_json(layout.FUSION_INPUTS.format(name), record)
    return record
