"""The `fuse` section of `params.yaml`, checked, and each fused run it names written.

A fused run's runs are registered or fused runs. Everything is checked before anything is read.
"""

from __future__ import annotations

import contextlib
import graphlib
import os
import tempfile
from pathlib import Path

from skillret.analysis.fusion import DEFAULT_DEPTH, DEFAULT_K, Fusion, run_names, write_fusion
from skillret.errors import ConfigError, InputError
from skillret.io.atomic import atomic_path, write_json
from skillret.io.hashing import sha256
from skillret.io.readers import RunSource, open_run, run_name
from skillret.io.write_runs import run_format
from skillret.pipeline import layout
from skillret.pipeline.params import check_name, load_yaml, mapping, run_sections

FUSE_KEYS = ("method", "runs", "k", "norm", "weights", "depth")


def fuse_to_file(runs, output: str | os.PathLike, fusion: Fusion | None = None, *,
                 tag: str | None = None, notices: list[str] | None = None,
                 atomic: bool = True, **settings) -> dict:
    """Fuse `runs` (`{name: path | RunSource}` or a list of paths) into `output` (format by
    extension); returns counts. `atomic=False` writes in place (an intermediate read at once)."""
    fusion = fusion or Fusion(**settings)
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
    registered, section = run_sections(params, source)
    plans = {}
    for name, spec in section.items():
        check_name(name, "fused run")
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
        try:
            fusion = Fusion(spec.get("method", "rrf"), spec.get("k", DEFAULT_K),
                            spec.get("norm"), dict(spec.get("weights") or {}),
                            spec.get("depth", DEFAULT_DEPTH))
            fusion.check_weights(runs)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        plans[name] = (fusion, runs)
    _refuse_cycles({n: [r for r in runs if r in section] for n, (_, runs) in plans.items()},
                   source)
    return plans


def _refuse_cycles(graph: dict[str, list[str]], source: str) -> None:
    order = graphlib.TopologicalSorter()
    for node, inputs in graph.items():
        order.add(node)
        for run in inputs:   # `node` first: a cycle is named in the order the runs are read
            order.add(run, node)
    try:
        order.prepare()
    except graphlib.CycleError as exc:
        raise ConfigError(f"{source}: a cycle of fused runs: {' -> '.join(exc.args[1])}") \
            from None


def _plans(path, name: str) -> tuple[dict, dict]:
    params = load_yaml(path)
    plans = fuse_section(params, os.fspath(path))
    if name not in plans:
        raise ConfigError(f"{os.fspath(path)}: no fused run {name!r} under fuse "
                          f"({', '.join(plans) or 'none defined'})")
    return params, plans


def fuse_from_params(path: str | os.PathLike, name: str, output: str | os.PathLike, *,
                     run_pattern: str | None = None, notices: list[str] | None = None):
    """Write fused run `name` of a params file to `output`; returns (fusion, run names, counts).
    Registered runs are read from `run_pattern` (`{}`: the name), else `runs:`; fused inputs are
    made in a temporary folder."""
    params, plans = _plans(path, name)
    registered = params.get("runs") or {}
    with tempfile.TemporaryDirectory(prefix="skillret-fuse-") as tmp:
        def file_of(run: str):
            if run in plans:   # an intermediate: written in place, read at once
                target = Path(tmp) / f"{run}.parquet"
                if not target.exists():
                    write(run, target, atomic=False)
                return target
            if run_pattern:
                return run_pattern.replace("{}", run)
            entry = registered[run]
            return entry.get("path") if isinstance(entry, dict) else entry

        def write(run: str, target, atomic: bool = True) -> dict:
            fusion, inputs = plans[run]
            return fuse_to_file({r: file_of(r) for r in inputs}, target, fusion, tag=run,
                                notices=notices, atomic=atomic)

        counts = write(name, output)
    return plans[name][0], plans[name][1], counts


def fusion_inputs_stage(name: str, params_path: str = layout.PARAMS) -> dict:
    """Stage `fuse_inputs@<name>`: the fused run's settings (and its fused inputs') and the sha256
    of each registered run it reads. DVC cannot take a params list as a stage's deps, so
    `fuse@<name>` depends on this file instead."""
    _, plans = _plans(params_path, check_name(name, "fused run"))
    fused, registered, todo = {}, {}, [name]
    while todo:
        current = todo.pop()
        fusion, inputs = plans[current]
        fused[current] = {"method": fusion.method, "k": fusion.k, "norm": fusion.norm,
                          "weights": dict(sorted(fusion.weights.items())),
                          "depth": fusion.depth, "runs": list(inputs)}
        for run in inputs:
            if run in plans:
                if run not in fused:
                    todo.append(run)
            elif run not in registered:
                path = layout.CANONICAL_RUN.format(run)
                if not Path(path).is_file():
                    raise ConfigError(f"fuse.{name}: run {run!r} has no canonical file {path} "
                                      f"(its score@{run} stage writes it)")
                registered[run] = {"path": path, "sha256": sha256(path)}
    record = {"fused": dict(sorted(fused.items())), "registered": dict(sorted(registered.items()))}
    write_json(layout.FUSION_INPUTS.format(name), record)
    return record
