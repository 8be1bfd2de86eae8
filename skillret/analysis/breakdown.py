"""A profile's metrics by query facet: per-stratum means, facet-file coverage, and tests within
strata. A stratum's mean uses the profile's arithmetic (`profile_mean`), so a one-value facet
gives back the profile's numbers. Facets:
- `n_required`: judgments with grade >= 2 (the skills the SkillRet query was written from);
- `n_relevant`: judgments with grade >= the profile's relevance level;
- `skill_category`: each category of the query's relevant skills (skills file, `category`),
  `(none)` without a relevant skill, `(missing)` for a skill the file lacks;
- any other name: a scalar field of the facets file keyed by query id; absent/null/empty is
  `(missing)`.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from skillret.analysis.significance import paired_tests, test_records
from skillret.columnar import arrow
from skillret.errors import ConfigError, InputError, ValidationFailed
from skillret.io.facets import (QUERY_ID_COLUMNS, SKILL_ID_COLUMNS, KeyedTable, check_scalar,
                                read_keyed)
from skillret.scoring.aggregate import profile_mean

BUILTIN_FACETS = ("n_required", "n_relevant", "skill_category")
MISSING = "(missing)"
NONE = "(none)"
REQUIRED_GRADE = 2
CATEGORY_FIELD = "category"


def label(value) -> str:
    """A facet value as its stratum key: 1.0 as 1, booleans as JSON, null/NaN/empty `(missing)`."""
    if value is None or value == "" or isinstance(value, float) and math.isnan(value):
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def stratum_order(labels: Iterable[str]) -> list[str]:
    """Numeric order when every value is a number, else text order; (none), (missing) last."""
    labels = set(labels)
    ordered = sorted(labels - {NONE, MISSING})
    try:
        numbers = {s: float(s) for s in ordered}
    except ValueError:
        numbers = {}
    if numbers and not any(map(math.isnan, numbers.values())):
        ordered.sort(key=lambda s: (numbers[s], s))
    return ordered + [s for s in (NONE, MISSING) if s in labels]


def _lookup(keys, values, wanted, default: str):
    """`values[i]` for the first `i` where `keys[i] == w`, for each `w` in `wanted`, else
    `default` (an object array)."""
    first = dict(zip(list(keys)[::-1], list(values)[::-1]))
    return np.array([first.get(w, default) for w in wanted], dtype=object)


def strata(name: str, facets, query_ids, qrels, level: int) -> list:
    """`(stratum, sorted positions in query_ids)` per stratum of facet `name`, in stratum order
    (a query in several skill_category strata)."""
    rows = np.arange(len(query_ids))
    if name in ("n_required", "n_relevant"):
        counts = qrels.relevant_counts(REQUIRED_GRADE if name == "n_required" else level)
        labels = _lookup(qrels.queries.to_pylist(), [str(c) for c in counts.tolist()],
                         query_ids, "0")
    elif name == "skill_category":
        skills = facets.skills
        relevant = qrels.relevance >= level
        pair_query = _lookup(query_ids, rows, arrow.filter(qrels.query_id, relevant).to_pylist(),
                             -1).astype(np.int64)
        categories = _lookup(skills.ids, [label(v) for v in skills.values(CATEGORY_FIELD)],
                             arrow.filter(qrels.skill_id, relevant).to_pylist(), MISSING)
        pairs = sorted({(int(q), str(c)) for q, c in zip(pair_query, categories) if q >= 0})
        without = np.setdiff1d(rows, [q for q, _ in pairs]).tolist()  # a category once per query
        rows = np.array([q for q, _ in pairs] + without, dtype=np.int64)
        labels = np.array([c for _, c in pairs] + [NONE] * len(without), dtype=object)
    else:
        table = facets.facets_file
        labels = _lookup(table.ids, [label(v) for v in table.values(name)], query_ids, MISSING)
    labels = labels.astype(str)
    return [(stratum, np.sort(rows[labels == stratum]))
            for stratum in stratum_order(labels.tolist())]


@dataclass
class Facets:
    """The facets and the files they read, checked before scoring."""

    facets: list[str]
    facets_file: KeyedTable | None = None
    skills: KeyedTable | None = None


def load_facets(facets: Sequence[str], facets_file: str | os.PathLike | None = None,
                skills: str | os.PathLike | None = None) -> Facets:
    """Raises ConfigError/InputError for an unknown facet, a file without an id column,
    skill_category without skills, or a facet holding lists or objects."""
    names = list(dict.fromkeys(str(f) for f in facets))
    table = read_keyed(facets_file, QUERY_ID_COLUMNS, "facets") if facets_file else None
    if "skill_category" in names and skills is None:
        raise ConfigError("facet 'skill_category' needs --skills FILE (SkillRet's skills "
                          "JSONL, with a 'category' field)")
    skills_table = read_keyed(skills, SKILL_ID_COLUMNS, "skills") if skills is not None else None
    if skills_table is not None:
        if CATEGORY_FIELD not in skills_table.columns:
            raise InputError(skills_table.path, f"no {CATEGORY_FIELD!r} field in the skills "
                                                f"file (needed by skill_category)")
        check_scalar(skills_table, CATEGORY_FIELD, "category")
    for name in [n for n in names if n not in BUILTIN_FACETS]:
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
    """`load_facets`, reading a file only when a facet needs it (the pipeline always names both)."""
    custom = any(f not in BUILTIN_FACETS for f in facets)
    return load_facets(facets, facets_file if custom else None,
                       skills if "skill_category" in facets else None)


def pick_profile(scores, name: str | None = None):
    """The profile a breakdown uses: `name`, or the first one scored."""
    found = [p for p in scores.profiles if name in (None, p.name)]
    if found:
        return found[0]
    raise ConfigError(f"breakdown profile {name!r} is not among the profiles scored "
                      f"({', '.join(p.name for p in scores.profiles)})")


def breakdown(scores, facets: Facets, profile=None) -> dict:
    """`{facet: {stratum: {"queries": n, metric: mean}}}` under profile `profile` (a name)."""
    prof = pick_profile(scores, profile)
    columns = scores.per_query_columns(prof)  # in the order the profile sums them
    if prof.run_queries_only:
        judged_index = np.asarray(scores.results.judged_index)
        in_run = judged_index[judged_index >= 0]
        order = np.searchsorted(np.sort(in_run), in_run)
        columns = {name: np.asarray(values)[order] for name, values in columns.items()}
    metrics = [m.short_name() for m in prof.parsed()]
    query_ids = np.asarray(columns["query_id"], dtype=object)
    out: dict[str, dict] = {}
    for name in facets.facets:
        out[name] = {}
        for stratum, members in strata(name, facets, query_ids, scores.qrels,
                                       prof.relevance_level):   # members in the profile's order
            out[name][stratum] = {"queries": int(len(members)), **{
                metric: profile_mean(prof, np.asarray(columns[metric])[members], len(members))
                for metric in metrics}}
    return out


def check_coverage(facets: Facets, qrels, level: int = 1, *, strict: bool = False) -> dict:
    """Judged queries the facets file lacks, relevant skills the skills file lacks; with
    `strict`, anything counted under `(missing)` is an error."""
    judged = qrels.queries.to_pylist()
    relevant = sorted(set(arrow.filter(qrels.skill_id, qrels.relevance >= level).to_pylist()))
    out: dict = {}
    for key, keyed, ids, counted in (("facets", facets.facets_file, judged, "judged_queries"),
                                     ("skills", facets.skills, relevant, "relevant_skills")):
        if keyed is not None:
            absent = [i for i in ids if i not in keyed]   # in the ids' order: sorted skills
            out[key] = {"path": Path(keyed.path).as_posix(), counted: len(ids),
                        "missing": len(absent), "examples": absent[:5]}
    if strict and (warnings := coverage_warnings(out)):
        raise ValidationFailed(f"{len(warnings)} warning(s) under strict validation: "
                               + "; ".join(warnings))
    return out


def add_coverage(report: dict, counts: dict) -> None:
    """Add `check_coverage`'s counts and warnings to a validation report."""
    report["facet_files"] = counts
    report["warnings"] += coverage_warnings(counts)
    if report["warnings"]:
        report["status"] = "warnings"


def coverage_warnings(counts: dict) -> list[str]:
    out = []
    for key, counted, where in (("facets", "judged_queries", f"counted under {MISSING}"),
                                ("skills", "relevant_skills",
                                 f"their queries count under {MISSING} in skill_category")):
        found = counts.get(key)
        if found and found["missing"]:
            out.append(f"{found['path']}: {found['missing']} of {found[counted]} "
                       f"{counted.replace('_', ' ')} have no row ({where}), e.g. "
                       f"{', '.join(found['examples'][:3])}")
    return out


def collect_plot(metrics: dict[str, str | os.PathLike]) -> list[dict]:
    """`dvc plots` records of every run's metrics file (`{run: path}`), one per run, facet,
    stratum and metric, runs in order given."""
    records: list[dict] = []
    for run, path in metrics.items():
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(path, f"no metrics file for run {run!r}",
                             hint="run dvc repro") from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON ({exc.msg})", line=exc.lineno) from None
        records.extend({"run": run, "facet": facet, "stratum": stratum, "metric": metric,
                        "value": value, "queries": row["queries"]}
                       for facet, strata in (data.get("breakdown") or {}).items()
                       for stratum, row in strata.items()
                       for metric, value in row.items() if metric != "queries")
    return records


def stratified_tests(comparison, facets: Facets, qrels, *, permutations: int = 10000,
                     bootstrap: int = 2000, seed: int = 0, correction: str = "holm",
                     alpha: float = 0.05, rounding: int | None = 5, level: int = 1) -> dict:
    """`{facet: {stratum: {"queries": n, "runs": {run: {metric: test}}}}}`, adjusted over
    every facet, stratum, run and metric as one family."""
    ids = np.asarray(comparison.query_ids, dtype=object)
    names = list(comparison.pairs)
    metrics = list(next(iter(comparison.pairs.values()))[0]) if names else []
    columns = [(n, m) for n in names for m in metrics]
    stats, sizes = [], {}
    for facet in facets.facets:
        for stratum, members in strata(facet, facets, ids, qrels, level):
            sizes[facet, stratum] = int(len(members))
            base = np.column_stack([comparison.pairs[n][0][m][members] for n, m in columns])
            run = np.column_stack([comparison.pairs[n][1][m][members] for n, m in columns])
            stats.extend(paired_tests(base, run, permutations=permutations,
                                      bootstrap=bootstrap, seed=seed))
    records = iter(test_records(stats, correction, alpha, rounding))  # in the order tested
    out: dict = {}
    for (facet, stratum), size in sizes.items():
        out.setdefault(facet, {})[stratum] = {"queries": size, "runs": {
            n: {m: next(records) for m in metrics} for n in names}}
    return out
