"""The stages `dvc.yaml` runs once for the project. Each writes its outputs last and together: a
failing stage replaces nothing."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import sys
from pathlib import Path, PurePath

from skillret.analysis import queries
from skillret.analysis.breakdown import collect_plot, load_needed_facets, stratified_tests
from skillret.analysis.compare import DEFAULTS, compare as paired_compare, flag_unjudged
from skillret.errors import ConfigError, InputError
from skillret.io.atomic import OutputSet, dumps_json, write_json, write_text
from skillret.io.facets import read_labels
from skillret.io.hashing import sha256, tree_sha256
from skillret.io.per_query import read_table_file, write_table
from skillret.io.readers import read_qrels
from skillret.pipeline import layout
from skillret.pipeline.comparable import count_of, counts
from skillret.pipeline.layout import read_canonical
from skillret.pipeline.params import (compare_section, load_yaml, qrels_section, run_entry,
                                      stage_params, stage_runs)
from skillret.render.compare import (markdown, queries_markdown, stratified_table,
                                     write_comparison)
from skillret.scoring.names import parse_metric


#: the keys naming one file each, in the order they are reported (then `runs.<name>`)
FILE_KEYS = (("qrels", "path"), ("data", "skills"), ("data", "queries"))
MISSING_SHOWN = 3  # missing files named in the one line; the others are counted
CLOSE = 0.82    # how alike (difflib's ratio) a name must be to be suggested for a missing one


def named_files(params: dict) -> list[tuple[str, str]]:
    """`(key, path)` of every file `params` names; a value that is not a path is left to the
    stage that reads it."""
    sections = {key: value for key, value in params.items() if isinstance(value, dict)}
    named = [(f"{section}.{key}", sections.get(section, {}).get(key))
             for section, key in FILE_KEYS]
    named += [(f"runs.{name}", path) for name, path in sections.get("runs", {}).items()]
    return [(key, path) for key, path in named if isinstance(path, str) and path.strip()]


def stage_outputs(root: str | os.PathLike) -> frozenset[str]:
    """Absolute paths of every output DVC knows at `root` (stages and `.dvc` files); empty without
    DVC or a project."""
    try:
        from dvc.repo import Repo  # slow to import: only once a file is missing
        with Repo(os.fspath(root)) as repo:
            return frozenset(os.path.normpath(out.fs_path) for out in repo.index.outs)
    except Exception:  # noqa: BLE001 - no DVC, not a DVC project, a dvc.yaml DVC rejects
        return frozenset()


def _absolute(root: Path, path: str) -> str:
    return os.path.normpath(os.path.join(root, path))


def _produced(target: str, outputs: frozenset[str]) -> bool:
    """`target` is an output, or inside an output that is a folder."""
    return target in outputs or any(target.startswith(out + os.sep) for out in outputs)


def suggestion(root: Path, path: str, outputs: frozenset[str] = frozenset()) -> str | None:
    """The closest existing (or to be made) path, part by part; None if a part has none close."""
    pure = PurePath(path)
    folder, found = os.path.join(root, pure.anchor), PurePath(pure.anchor)
    for part in pure.parts[bool(pure.anchor):]:
        if part not in (".", ".."):  # the names in `folder`: on disk, and to be made there
            prefix = folder.rstrip(os.sep) + os.sep
            names = (set(os.listdir(folder)) if os.path.isdir(folder) else set()) | {
                out[len(prefix):].split(os.sep)[0] for out in outputs if out.startswith(prefix)}
            close = [part] if part in names else difflib.get_close_matches(
                part, sorted(names), n=1, cutoff=CLOSE)
            if not close:
                return None
            part = close[0]
        found /= part
        folder = os.path.join(folder, part)
    found = found.as_posix()
    target = _absolute(root, found)
    if found == pure.as_posix() or not (os.path.exists(target) or _produced(target, outputs)):
        return None
    return found


def check_inputs(params: dict, root: str | os.PathLike, source: str = "params.yaml",
                 outputs=stage_outputs) -> list[tuple[str, str, bool]]:
    """Check every file `params` names exists or is made by DVC (`outputs` asked only when one is
    missing); else one `ConfigError`. Returns `(key, path, present)` per file."""
    root = Path(root)
    named = named_files(params)
    absent = {key: path for key, path in named if not os.path.exists(_absolute(root, path))}
    made = frozenset(outputs(root)) if absent else frozenset()
    missing = [(key, path) for key, path in absent.items()
               if not _produced(_absolute(root, path), made)]
    if missing:
        problems = []
        for key, path in missing[:MISSING_SHOWN]:
            close = suggestion(root, path, made)
            problems.append(f"{key}: {path} does not exist"
                            + (f" (did you mean {close}?)" if close else ""))
        more = len(missing) - MISSING_SHOWN
        raise ConfigError(f"{source}: " + "; ".join(problems)
                          + (f"; and {count_of(more, 'more missing file')}" if more > 0 else ""))
    return [(key, path, key not in absent) for key, path in named]


def inputs_stage() -> None:
    """Stage `inputs`: every file `params.yaml` names is there, or a stage of `dvc.yaml` makes it
    (DVC would stop on a missing dependency with its own `[Errno 2]`; this stage runs first and
    names the key to fix). Writes `reports/inputs.json`: only `qrels.path`, so that registering a
    run leaves `normalize_qrels` unchanged."""
    checked = check_inputs(load_yaml(layout.PARAMS), Path.cwd(), layout.PARAMS)
    qrels = next((path for key, path, _ in checked if key == "qrels.path"), None)
    write_json(layout.INPUTS, {"qrels": {"path": qrels}})
    later = [path for _, path, present in checked if not present]
    shown = ", ".join(later[:MISSING_SHOWN]) + (", ..." if len(later) > MISSING_SHOWN else "")
    print(f"{count_of(len(checked), 'input file')} named in {layout.PARAMS}: "
          + (f"{len(checked) - len(later)} found, {len(later)} made by a stage ({shown})"
             if later else "all found"))


def normalize_qrels(qrels, output, stats=None, *, fmt=None, split=None, columns=None) -> dict:
    """Judgments -> canonical TSV (query_id, skill_id, relevance); returns the statistics (also
    written to `stats` when given)."""
    judgments = read_qrels(qrels, fmt=fmt, split=split, columns=columns)
    summary = judgments.stats()
    write_table(output, {"query_id": judgments.query_id, "skill_id": judgments.skill_id,
                         "relevance": judgments.relevance})
    if stats is not None:
        write_json(stats, summary)
    return summary


def normalize_qrels_stage() -> None:
    """Stage `normalize_qrels`."""
    path, options = qrels_section(load_yaml(layout.PARAMS), layout.PARAMS)
    try:
        normalize_qrels(path, layout.QRELS, layout.QRELS_STATS, **options)
    except InputError as error:
        raise error.shown_with(section="qrels") from None


def settings() -> None:
    """Stage `settings`: everything checked once, written as small files that change only when
    their content does (the settings, each run's `score@<run>` dependency, the run names); files
    of runs no longer there are removed."""
    params, runs, evaluation, sources, strict = stage_params(layout.PARAMS)
    entries = {name: run_entry(params, name, layout.PARAMS)[0] for name in params.get("runs") or {}}
    data = params.get("data") or {}
    plan = load_needed_facets(evaluation.breakdown, data.get("queries"), data.get("skills"))
    inputs = {"qrels": layout.QRELS, **{key: data[key] for key, read in (
        ("skills", plan.skills), ("queries", plan.facets_file)) if read is not None}}
    script = layout.SCORE_SCRIPT  # the code score@<run> runs: this package and the stage script
    record = {
        "code": {"skillret": tree_sha256(Path(__file__).resolve().parents[1]),
                 script: sha256(script) if Path(script).is_file() else None},
        "eval": {"profiles": {p.name: p.describe() for p in evaluation.resolved()},
                 "plot_profile": evaluation.plot_profile, "breakdown": evaluation.breakdown,
                 "breakdown_profile": evaluation.breakdown_profile,
                 "headline": [f"{profile}.{metric}" for metric, profile in sources]},
        "validate": {"strict": strict},
        "inputs": {key: {"path": str(path), "sha256": sha256(path)}
                   for key, path in inputs.items()},
    }
    text = dumps_json(record)
    shared = hashlib.sha256(text.encode("utf-8")).hexdigest()
    with OutputSet():
        write_text(layout.SETTINGS, text)
        write_json(layout.RUN_SET, runs)
        for name, path in entries.items():  # the options as written (checked by run_entry)
            write_json(f"{layout.RUN_SETTINGS_DIR}/{name}.json",
                       {"run": name, "path": path, "options": params["run_options"][name] or {},
                        "settings_sha256": shared})
    stale = layout.files_of_runs_not_in(runs, entries)
    for path in stale:
        path.unlink()
    print(f"{count_of(len(runs), 'run')}; {', '.join(record['eval']['profiles'])}; "
          f"headline {', '.join(record['eval']['headline'])}"
          + (f"; removed {count_of(len(stale), 'file')} of runs no longer registered"
             if stale else ""))


def charts() -> None:
    """Stage `charts`: `plots/curves.json` and `plots/breakdown.json` over every run."""
    runs = stage_runs(load_yaml(layout.PARAMS))
    records = [{"run": name, **row} for name in sorted(runs)
               for row in json.loads(Path(layout.RUN_OUTPUTS["plots"].format(name)).read_text())]
    bars = collect_plot({run: layout.RUN_OUTPUTS["metrics"].format(run) for run in runs})
    with OutputSet():
        write_json(layout.CURVES, records)
        write_json(layout.BREAKDOWN_PLOT, bars)


def compare() -> None:
    """Stage `compare`: every run against `compare.baseline` in one family (and within the strata
    of `eval.breakdown`), each run's largest per-query changes, and the headline."""
    params, runs, evaluation, sources, _ = stage_params(layout.PARAMS)
    settings = compare_section(params, layout.PARAMS)
    first = sources[0][0]
    if first not in settings["metrics"]:
        raise ConfigError(f"{layout.PARAMS}: eval.headline starts with {first}, which "
                          f"compare.metrics does not test ({', '.join(settings['metrics'])}): "
                          f"add it to compare.metrics")
    if not runs:
        raise ConfigError("no run registered under runs: in params.yaml")
    baseline = settings.get("baseline") or runs[0]
    if baseline not in runs:
        raise ConfigError(f"compare.baseline: unknown run {baseline!r} (runs: {', '.join(runs)})")
    metrics = settings["metrics"]
    loaded = {name: read_table_file(layout.RUN_OUTPUTS["per_query"].format(name), metrics)
              for name in runs}
    judgments = read_qrels(layout.QRELS)
    kwargs = {key: settings[key] for key in DEFAULTS}
    comparison, notes = paired_compare((baseline, loaded[baseline]),
                                       {n: t for n, t in loaded.items() if n != baseline},
                                       metrics, **kwargs)
    scored = {name: json.loads(Path(layout.RUN_OUTPUTS["metrics"].format(name)).read_text())
              for name in runs}
    judged = {name: scored[name].get("judged") or {} for name in runs}
    flag_unjudged(comparison.result, {n: (judged[baseline], judged[n]) for n in runs})
    data = params.get("data") or {}
    text, in_strata = markdown(comparison), 0  # the report, and the tests within strata
    if evaluation.breakdown:
        facets = load_needed_facets(evaluation.breakdown, data.get("queries"),
                                    data.get("skills"))
        strata = comparison.result["breakdown"] = stratified_tests(
            comparison, facets, judgments, level=parse_metric(metrics[0]).rel, **kwargs)
        text = (text.rstrip("\n") + "\n\n## Within strata (eval.breakdown)\n\n```\n"
                + stratified_table(strata, settings["correction"]) + "\n```\n")
        in_strata = sum(len(m) for cells in strata.values() for cell in cells.values()
                        for m in cell["runs"].values())
    reports = query_reports(runs, baseline, loaded, judgments, metrics[0], data)
    table = headline(scored, sources, comparison.result)
    judged_counts = {key: value for key, value in
                     counts(judgments, evaluation.relevance_level or 1).items() if key != "pairs"}
    with OutputSet():
        write_comparison(comparison, layout.COMPARE)
        write_text(layout.COMPARE_REPORT, text)
        for run, report in reports.items():
            write_text(f"{layout.QUERY_REPORTS}/{run}.md", report)
        for stale in sorted(Path(layout.QUERY_REPORTS).glob("*.md")):  # the baseline's too
            if stale.stem not in reports:
                stale.unlink()
        write_json(layout.HEADLINE, {**table, layout.HEADLINE_QRELS: judged_counts})
    for note in notes:
        print(f"compare: note: {note}", file=sys.stderr)
    tests = sum(len(m) for m in comparison.result["runs"].values())
    lines = summary_lines(table, sources, baseline, settings["alpha"])
    lines[0] += (f"; {count_of(tests, 'test')}" + (f", {in_strata} in strata" if in_strata else "")
                 + f": {layout.COMPARE_REPORT}")
    print("\n".join(lines))


def headline(scored: dict, sources: list[tuple[str, str]], comparison: dict) -> dict:
    """`{run: {metric: value, ..., "delta": d, "significant": bool}}` from each run's metrics
    file, runs sorted; the verdict is on the first headline metric, for every run but the
    baseline."""
    first = sources[0][0]
    table = {}
    for run in sorted(scored):
        path, scores = layout.RUN_OUTPUTS["metrics"].format(run), scored[run]
        row = {}
        for metric, profile in sources:
            try:
                row[metric] = scores[profile][metric]
            except (KeyError, TypeError):
                raise InputError(f"{path}: has no {profile}.{metric} (scored before "
                                 f"eval changed? dvc repro rescores it)") from None
        tested = (comparison.get("runs") or {}).get(run, {}).get(first)
        if tested is not None:
            row.update(delta=tested["delta"], significant=tested["significant"])
        table[run] = row
    return table


def summary_lines(table: dict, sources: list[tuple[str, str]], baseline: str,
                  alpha: float) -> list[str]:
    """The compare stage's screen: one line per run, the baseline first."""
    first, profile = sources[0]
    order = [baseline, *(r for r in table if r != baseline)]
    width = max(len(r) for r in order)
    head = f"{first} ({profile})" + "".join(f", {m}" for m, _ in sources[1:])
    lines = [f"headline: {head} against {baseline} (* p_adj <= {alpha:g})"]
    for run in order:
        row = table[run]
        values = "  ".join(f"{row[m]:.5f}" for m, _ in sources)
        verdict = (f"{row['delta']:+.5f}{' *' if row['significant'] else ''}" if "delta" in row
                   else "(baseline)")  # every other run is tested against the baseline
        lines.append(f"  {run.ljust(width)}  {values}  {verdict}".rstrip())
    return lines


QUERIES_SHOWN = 10  # largest losses, and largest gains, per run


def _canonical(run: str) -> queries.KeptRows:
    """Run `run`'s rows, from its canonical file (a registered run's, else a fused run's)."""
    for pattern in (layout.CANONICAL_RUN, layout.FUSED_OUTPUTS["normalized"]):
        path = Path(pattern.format(run))
        if path.is_file():
            return queries.KeptRows.of_table(read_canonical(path, path))
    raise InputError(layout.CANONICAL_RUN.format(run), f"no canonical run of {run!r}",
                     hint="run dvc repro")


def query_reports(runs: list[str], baseline: str, tables: dict, judgments, metric: str,
                  data: dict) -> dict[str, str]:
    """`{run: Markdown}` for every run but the baseline; `tables`: each run's `PerQuery`; `data`:
    params.yaml's `data` (the queries' texts, the skills' names)."""
    selected = {run: queries.select(tables[baseline], tables[run], metric, worst=QUERIES_SHOWN,
                                    best=QUERIES_SHOWN) for run in runs if run != baseline}
    if not selected:
        return {}
    base_run = _canonical(baseline)
    texts = _labels(data.get("queries"), "query",
                    sorted({q for chosen in selected.values() for q in chosen.chosen()}))
    reports = {run: queries.explain(chosen, judgments, base_run.rankings(chosen.chosen()),
                                    _canonical(run).rankings(chosen.chosen()), label_a=baseline,
                                    label_b=run, texts=texts)
               for run, chosen in selected.items()}
    skills = sorted({s for r in reports.values() for s in queries.shown_skill_ids(r)})
    names = _labels(data.get("skills"), "name", skills)
    return {run: queries_markdown(queries.name_skills(report, names))
            for run, report in reports.items()}


def _labels(path, field: str, wanted: list[str]) -> dict[str, str]:
    if not path or not wanted:
        return {}
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such file")
    return read_labels(path.read_bytes(), str(path), field, wanted)
