"""Where did it change? A profile's metrics broken down by query facets: the facets asked for
(`Facets`, their files read and checked first), the means per stratum, the facet files'
coverage of the judgments, and a comparison's tests within strata. The strata themselves are
built in `skillret.analysis.strata`, the files read in `skillret.io.facets`, the tables
printed by `skillret.render.breakdown`.

A facet puts every judged query in one or more strata; each stratum gets the mean of the same
per-query values the profile averages, over the queries of the profile's query set that fall in
it, with the profile's own arithmetic and rounding
(`skillret.scoring.aggregate.profile_mean`, the function the profile's numbers come
from). A facet whose value is the same for every query therefore gives back the profile's
numbers exactly.

Facets:

`n_required`
    judgments with grade >= 2 (in SkillRet, the skills the query was written from);
`n_relevant`
    judgments that count as relevant: grade >= the profile's relevance level;
`skill_category`
    the categories of the query's relevant skills, from a skills file (SkillRet's skills JSONL,
    field `category`); a query counts once in each of its categories, under `(none)` when it
    has no relevant skill, under `(missing)` for a relevant skill the file lacks;
any other name
    a field of a facets file keyed by query id (JSONL, CSV/TSV or Parquet; SkillRet's queries
    JSONL as it is); its value must be a single value (string, number, boolean); a judged query
    the file lacks, or whose value is null or empty, counts under `(missing)`.

Strata are ordered numerically when every value is a number, else by text; `(none)` and
`(missing)` come last.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from skillret.analysis.strata import (CATEGORY_FIELD, MISSING, NONE, facet_strata, judgments,
                                      label, stratum_order)
from skillret.errors import ConfigError, InputError
from skillret.io.facets import (QUERY_ID_COLUMNS, SKILL_ID_COLUMNS, KeyedTable, check_scalar,
                                missing_queries, missing_skills, read_keyed)

BUILTIN_FACETS = ("n_required", "n_relevant", "skill_category")

# --- what to break down by --------------------------------------------------------------------

@dataclass
class Facets:
    """The facets to break down by (`facets`: their names), with the files they read, checked
    before anything is scored."""

    facets: list[str]
    facets_file: KeyedTable | None = None
    skills: KeyedTable | None = None


def load_facets(facets: Sequence[str], facets_file: str | os.PathLike | None = None,
                skills: str | os.PathLike | None = None) -> Facets:
    """Check the facet names against the built-in ones and the facets file's fields; read the
    files. Raises a one-line error for an unknown facet, a file without an id column,
    `skill_category` without a skills file, or a facet holding lists or objects."""
    names = list(dict.fromkeys(str(f) for f in facets))
    table = read_keyed(facets_file, QUERY_ID_COLUMNS, "facets") if facets_file else None
    skills_table = None
    if "skill_category" in names:
        if skills is None:
            raise ConfigError("facet 'skill_category' needs --skills FILE (SkillRet's skills "
                              "JSONL, with a 'category' field)")
    if skills is not None:
        skills_table = read_keyed(skills, SKILL_ID_COLUMNS, "skills")
        if CATEGORY_FIELD not in skills_table.columns:
            raise InputError(skills_table.path, f"no {CATEGORY_FIELD!r} field in the skills "
                                                f"file (needed by skill_category)")
        check_scalar(skills_table, CATEGORY_FIELD, "category")
    for name in names:
        if name in BUILTIN_FACETS:
            continue
        if table is None:
            raise ConfigError(f"unknown facet {name!r}: built in are "
                              f"{', '.join(BUILTIN_FACETS)}; any other must be a field of "
                              f"--facets FILE")
        if name not in table.columns or name == table.key:
            fields = [c for c in table.columns if c != table.key]
            raise InputError(table.path, f"no field {name!r} to break down by (fields: "
                                         f"{', '.join(fields) or 'none'}; built in: "
                                         f"{', '.join(BUILTIN_FACETS)})")
        check_scalar(table, name, "facet")
    return Facets(names, table, skills_table)


def load_needed_facets(facets: Sequence[str],
                       facets_file: str | os.PathLike | None = None,
                       skills: str | os.PathLike | None = None) -> Facets:
    """`load_facets`, reading each file only when a facet needs it (the pipeline names both
    SkillRet files whatever the facets): the skills file for skill_category, the facets file
    for a facet that is not built in."""
    custom = any(f not in BUILTIN_FACETS for f in facets)
    return load_facets(facets, facets_file if custom else None,
                       skills if "skill_category" in facets else None)


# --- the adapter to the engine ----------------------------------------------------------------

def profile_values(scores, profile) -> tuple[dict, dict]:
    """The one place this module reads a scored run (`skillret.score`'s `Scores`).

    Returns the per-query values `profile` averages, one row per query of its query set, in
    the order the profile adds them (run order for the official set): a dict of arrays with
    `query_id` and the profile's metrics; and the judgments (see `judgments`).
    """
    import numpy as np

    columns = scores.per_query_columns(profile)
    if profile.run_queries_only:
        judged_index = np.asarray(scores.results.judged_index)
        in_run = judged_index[judged_index >= 0]             # run order
        order = np.searchsorted(np.sort(in_run), in_run)
        columns = {name: np.asarray(values)[order] for name, values in columns.items()}
    return columns, judgments(scores.qrels)


def pick_profile(scores, name: str | None = None):
    """The profile a breakdown uses: `name`, or the first one scored."""
    if name is None:
        return scores.profiles[0]
    for p in scores.profiles:
        if p.name == name:
            return p
    raise ConfigError(f"breakdown profile {name!r} is not among the profiles scored "
                      f"({', '.join(p.name for p in scores.profiles)})")


def breakdown(scores, facets: Facets, profile=None) -> dict:
    """`{facet: {stratum: {"queries": n, metric: mean, ...}}}` for `profile` (a name or a
    Profile among those scored; default the first), strata in `stratum_order`."""
    import numpy as np

    from skillret.scoring.aggregate import profile_mean
    from skillret.scoring.profiles import Profile

    prof = profile if isinstance(profile, Profile) else pick_profile(scores, profile)
    columns, judgment_arrays = profile_values(scores, prof)
    metrics = [m.short_name() for m in prof.parsed()]
    query_ids = np.asarray(columns["query_id"], dtype=object)
    out: dict[str, dict] = {}
    for name in facets.facets:
        rows, labels = facet_strata(name, facets, query_ids, judgment_arrays,
                                    prof.relevance_level)
        names, codes = np.unique(labels.astype(str), return_inverse=True)
        position = {stratum: i for i, stratum in enumerate(names.tolist())}
        out[name] = {}
        for stratum in stratum_order(position):
            members = np.sort(rows[codes == position[stratum]])   # the profile's order
            out[name][stratum] = {"queries": int(len(members)), **{
                metric: profile_mean(prof, np.asarray(columns[metric])[members], len(members))
                for metric in metrics}}
    return out


def coverage(facets: Facets, qrels, level: int = 1) -> dict:
    """Counts for validation: judged queries the facets file lacks, relevant skills (grade >=
    `level`) the skills file lacks; each counts under `(missing)` in a breakdown."""
    table = judgments(qrels)
    out: dict = {}
    if facets.facets_file is not None:
        judged_queries = list(dict.fromkeys(table["query_id"].tolist()))
        lacking = missing_queries(facets.facets_file, judged_queries)
        out["facets"] = {"path": Path(facets.facets_file.path).as_posix(),
                         "judged_queries": len(judged_queries), "missing": len(lacking),
                         "examples": lacking[:5]}
    if facets.skills is not None:
        relevant = sorted(set(table["skill_id"][table["relevance"] >= level].tolist()))
        lacking = missing_skills(facets.skills, relevant)
        out["skills"] = {"path": Path(facets.skills.path).as_posix(),
                         "relevant_skills": len(relevant), "missing": len(lacking),
                         "examples": lacking[:5]}
    return out


def check_coverage(facets: Facets, qrels, level: int = 1, *, strict: bool = False) -> dict:
    """`coverage` for validation (`qrels` loaded, a
    `Qrels`); with `strict`, anything counted under
    `(missing)` is an error (`ValidationFailed`)."""
    from skillret.errors import ValidationFailed

    counts = coverage(facets, qrels, level)
    warnings = coverage_warnings(counts)
    if strict and warnings:
        raise ValidationFailed(f"{len(warnings)} warning(s) under strict validation: "
                               + "; ".join(warnings))
    return counts


def add_coverage(report: dict, counts: dict) -> None:
    """Put `coverage`'s counts in a validation report, its warnings among the others."""
    report["facet_files"] = counts
    report["warnings"] += coverage_warnings(counts)
    if report["warnings"]:
        report["status"] = "warnings"


def coverage_warnings(counts: dict) -> list[str]:
    out = []
    facets = counts.get("facets")
    if facets and facets["missing"]:
        out.append(f"{facets['path']}: {facets['missing']} of {facets['judged_queries']} judged "
                   f"queries have no row (counted under {MISSING}), e.g. "
                   f"{', '.join(facets['examples'][:3])}")
    skills = counts.get("skills")
    if skills and skills["missing"]:
        out.append(f"{skills['path']}: {skills['missing']} of {skills['relevant_skills']} "
                   f"relevant skills have no row (their queries count under {MISSING} in "
                   f"skill_category), e.g. {', '.join(skills['examples'][:3])}")
    return out


def plot_records(result: dict, run: str | None = None) -> list[dict]:
    """A breakdown as plot data (`dvc plots`): one record per facet, stratum and metric,
    `{"run", "facet", "stratum", "metric", "value", "queries"}` in the breakdown's order
    (`run` only when given)."""
    named = {} if run is None else {"run": run}
    return [{**named, "facet": facet, "stratum": stratum, "metric": metric, "value": value,
             "queries": row["queries"]}
            for facet, strata in result.items() for stratum, row in strata.items()
            for metric, value in row.items() if metric != "queries"]


def collect_plot(metrics: dict[str, str | os.PathLike]) -> list[dict]:
    """Plot records of every run's breakdown, from its metrics file (`{run: path}`), runs in
    the order given: one file that `dvc plots` draws with the runs side by side. A metrics
    file without a breakdown adds nothing (`eval.breakdown` empty)."""
    records: list[dict] = []
    for run, path in metrics.items():
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise InputError(path, f"no metrics file for run {run!r}",
                             hint="run dvc repro") from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON ({exc.msg})", line=exc.lineno) from None
        records.extend(plot_records(data.get("breakdown") or {}, run))
    return records


# --- with comparisons -------------------------------------------------------------------------

def stratified_tests(comparison, facets: Facets, qrels, *, permutations: int = 10000,
                     bootstrap: int = 2000, seed: int = 0, correction: str = "holm",
                     alpha: float = 0.05, rounding: int | None = 5, level: int = 1) -> dict:
    """The paired tests of a comparison (`skillret.analysis.compare.compare`) within each
    stratum.

    `{facet: {stratum: {"queries": n, "runs": {run: {metric: test}}}}}`: each test is the
    comparison's own (the same fields, seed and draws) on the paired queries of the stratum;
    the randomization p-values are adjusted with `correction` over the whole family, every
    (facet, stratum, run, metric) tested here, so that reading many strata does not find
    differences by chance. Strata follow `stratum_order`; `level` is the relevance level
    of n_relevant and skill_category.
    """
    import numpy as np

    from skillret.analysis.significance import adjust, paired_tests, test_record

    ids = np.asarray(comparison.query_ids, dtype=object)
    judgment_arrays = judgments(qrels)
    names = list(comparison.pairs)
    metrics = list(next(iter(comparison.pairs.values()))[0]) if names else []
    columns = [(n, m) for n in names for m in metrics]
    keys, stats, sizes = [], [], {}
    for facet in facets.facets:
        rows, labels = facet_strata(facet, facets, ids, judgment_arrays, level)
        labels = labels.astype(str)
        for stratum in stratum_order(labels.tolist()):
            members = np.sort(rows[labels == stratum])
            sizes[facet, stratum] = int(len(members))
            base = np.column_stack([comparison.pairs[n][0][m][members] for n, m in columns])
            run = np.column_stack([comparison.pairs[n][1][m][members] for n, m in columns])
            stats.extend(paired_tests(base, run, permutations=permutations,
                                      bootstrap=bootstrap, seed=seed))
            keys.extend((facet, stratum, n, m) for n, m in columns)
    adjusted = adjust([s["p_randomization"] for s in stats], correction) if stats else []
    out: dict = {}
    for (facet, stratum, name, metric), s, p in zip(keys, stats, adjusted):
        cell = out.setdefault(facet, {}).setdefault(
            stratum, {"queries": sizes[facet, stratum], "runs": {}})
        cell["runs"].setdefault(name, {})[metric] = test_record(s, float(p), alpha, rounding)
    return out


__all__ = ["BUILTIN_FACETS", "MISSING", "NONE", "Facets", "load_facets", "load_needed_facets",
           "breakdown", "coverage", "coverage_warnings", "check_coverage",
           "add_coverage", "label", "stratum_order", "read_keyed", "profile_values",
           "pick_profile", "plot_records", "collect_plot", "stratified_tests"]
