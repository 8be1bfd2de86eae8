"""Where did it change? A profile's metrics broken down by query facets.

A facet puts every judged query in one or more strata; each stratum gets the mean of the same
per-query values the profile averages, over the queries of the profile's query set that fall in
it, with the profile's own arithmetic and rounding (:func:`skillret.scoring.aggregate.profile_mean`, the
function the profile's numbers come from). A facet whose value is the same for every query
therefore gives back the profile's numbers exactly.

Facets:

``n_required``
    judgments with grade >= 2 (in SkillRet, the skills the query was written from);
``n_relevant``
    judgments that count as relevant: grade >= the profile's relevance level;
``skill_category``
    the categories of the query's relevant skills, from a skills file (SkillRet's skills JSONL,
    field ``category``); a query counts once in each of its categories, under ``(none)`` when it
    has no relevant skill, under ``(missing)`` for a relevant skill the file lacks;
any other name
    a field of a facets file keyed by query id (JSONL, CSV/TSV or Parquet; SkillRet's queries
    JSONL as it is); its value must be a single value (string, number, boolean); a judged query
    the file lacks, or whose value is null or empty, counts under ``(missing)``.

Strata are ordered numerically when every value is a number, else by text; ``(none)`` and
``(missing)`` come last.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from skillret.errors import ConfigError, InputError

MISSING = "(missing)"
NONE = "(none)"
REQUIRED_GRADE = 2
BUILTIN_FACETS = ("n_required", "n_relevant", "skill_category")
QUERY_ID_COLUMNS = ("query_id", "qid", "id", "_id")
SKILL_ID_COLUMNS = ("skill_id", "id", "_id", "doc_id", "docid")
CATEGORY_FIELD = "category"
_TEXT_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv",
                  ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


# --- facet files ------------------------------------------------------------------------------

@dataclass
class KeyedTable:
    """Rows of a facets (or skills) file keyed by id: ``values(name)`` is one column as Python
    values in row order; ``lines`` are 1-based line numbers for text formats."""

    path: str
    key: str
    ids: list[str]
    columns: list[str]
    _rows: list[dict] | None = None
    _table: object = None
    lines: list[int] | None = None
    _index: dict[str, int] = field(default_factory=dict)

    def values(self, name: str) -> list:
        if self._rows is not None:
            return [row.get(name) for row in self._rows]
        return self._table.column(name).to_pylist()

    def is_nested(self, name: str) -> bool:
        if self._table is None:
            return False
        import pyarrow as pa
        kind = self._table.schema.field(name).type
        return pa.types.is_nested(kind)

    def line(self, row: int) -> int | None:
        return None if self.lines is None else self.lines[row]

    def __contains__(self, key: str) -> bool:
        return key in self._index


def read_keyed(path: str | os.PathLike, id_columns: Sequence[str], what: str) -> KeyedTable:
    """A facets or skills file: JSONL (or a JSON array), CSV, TSV or Parquet, by extension.

    The key is the first of ``id_columns`` the file has; ids are read as text. A missing key
    column or an id given twice is an error naming the file (and line).
    """
    path = os.fspath(path)
    kind = _TEXT_SUFFIXES.get(Path(path).suffix.lower())
    if kind is None:
        raise InputError(path, f"cannot tell the format of this {what} file from its extension",
                         hint="use .jsonl, .csv, .tsv or .parquet")
    if not os.path.isfile(path):
        raise InputError(path, f"no such {what} file")
    if kind == "jsonl":
        table = _read_json_rows(path, id_columns, what)
    else:
        table = _read_arrow(path, kind, id_columns, what)
    seen: dict[str, int] = {}
    for row, qid in enumerate(table.ids):
        if qid in seen:
            first = table.line(seen[qid])
            where = f" (first on line {first})" if first is not None else ""
            raise InputError(path, f"id {qid!r} appears twice{where}", line=table.line(row))
        seen[qid] = row
    table._index = seen
    return table


def _key_column(path: str, columns: Iterable[str], id_columns: Sequence[str], what: str) -> str:
    columns = list(columns)
    for name in id_columns:
        if name in columns:
            return name
    raise InputError(path, f"no id column in this {what} file (looked for "
                           f"{', '.join(id_columns)}; found {', '.join(columns) or 'none'})")


def _json_error(path: str, exc: ValueError, line: int | None) -> InputError:
    """JSONDecodeError, or an integer of over 4,300 digits (a plain ValueError)."""
    reason = getattr(exc, "msg", None) or str(exc).split(":")[0]
    return InputError(path, f"not valid JSON ({reason})", line=getattr(exc, "lineno", line))


def _read_json_rows(path: str, id_columns: Sequence[str], what: str) -> KeyedTable:
    from skillret.io.documents import decode_utf8
    with open(path, "rb") as fh:
        text = decode_utf8(path, fh.read())  # invalid UTF-8: an error naming its line
    rows: list[dict] = []
    lines: list[int] = []
    if text.lstrip().startswith("["):  # a JSON array of objects
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _json_error(path, exc, None) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply") from None
        for item in data:
            if not isinstance(item, dict):
                raise InputError(path, "expected an array of objects")
            rows.append(item)
        lines = None
    else:
        for number, line in enumerate(text.split("\n"), 1):  # not splitlines: JSON strings
            # may hold U+2028 and other characters splitlines() would break a line at
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise _json_error(path, exc, number) from None
            except RecursionError:
                raise InputError(path, "JSON nested too deeply", line=number) from None
            if not isinstance(item, dict):
                raise InputError(path, "expected one JSON object per line", line=number)
            rows.append(item)
            lines.append(number)
    if not rows:
        raise InputError(path, f"the {what} file has no rows")
    columns = list(dict.fromkeys(name for row in rows for name in row))
    key = _key_column(path, columns, id_columns, what)
    ids = []
    for i, row in enumerate(rows):
        value = row.get(key)
        if value is None or isinstance(value, (list, dict, bool)) or value == "":
            raise InputError(path, f"a row without a usable {key!r}",
                             line=None if lines is None else lines[i])
        ids.append(str(value))
    return KeyedTable(path, key, ids, columns, _rows=rows, lines=lines)


def _read_arrow(path: str, kind: str, id_columns: Sequence[str], what: str) -> KeyedTable:
    import pyarrow as pa

    try:
        if kind == "parquet":
            import pyarrow.parquet as pq
            with pq.ParquetFile(path) as parquet:  # pq.read_table probes for pandas
                table = parquet.read()
        else:
            import pyarrow.csv as pacsv
            delimiter = "\t" if kind == "tsv" else ","
            parse = pacsv.ParseOptions(delimiter=delimiter)
            with open(path, encoding="utf-8", newline="") as fh:
                header = next(csv.reader(fh, delimiter=delimiter), [])
            key = _key_column(path, header, id_columns, what)
            table = pacsv.read_csv(path, parse_options=parse, convert_options=pacsv.ConvertOptions(
                column_types={key: pa.string()}, strings_can_be_null=True))
        names = table.schema.names  # a Parquet name that is not UTF-8 fails here
    except (pa.ArrowException, OSError, UnicodeDecodeError, csv.Error) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(path, f"cannot read this {what} file ({reason})") from None
    if table.num_rows == 0:
        raise InputError(path, f"the {what} file has no rows")
    key = _key_column(path, names, id_columns, what)
    if names.count(key) > 1:
        raise InputError(path, f"has {names.count(key)} columns named {key!r}",
                         hint="give each column its own name")
    ids_col = table.column(key)
    if ids_col.null_count:
        raise InputError(path, f"a row without a usable {key!r}")
    ids = [str(v) for v in ids_col.to_pylist()]
    lines = None
    if kind != "parquet":
        # Line 1 is the header; row i is on line i + 2 when every line holds one row (no field
        # spans lines, no blank line): only then are line numbers given.
        with open(path, "rb") as fh:
            data = fh.read()
        if data.count(b"\n") + (not data.endswith(b"\n")) == table.num_rows + 1 \
                and b"\n\n" not in data and b"\n\r\n" not in data:
            lines = list(range(2, table.num_rows + 2))
    return KeyedTable(path, key, ids, list(table.schema.names), _table=table, lines=lines)


# --- values and strata ------------------------------------------------------------------------

def label(value) -> str:
    """A facet value as the key it is reported under: numbers as written (1.0 as 1), booleans as
    JSON spells them, null/NaN/empty as ``(missing)``."""
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return MISSING
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def stratum_order(labels: Iterable[str]) -> list[str]:
    """Numeric order when every value is a number, else text order; (none), (missing) last."""
    labels = set(labels)
    special = [s for s in (NONE, MISSING) if s in labels]
    plain = labels - {NONE, MISSING}
    numbers = {s: _number(s) for s in plain}
    if plain and all(v is not None for v in numbers.values()):
        ordered = sorted(plain, key=lambda s: (numbers[s], s))
    else:
        ordered = sorted(plain)
    return ordered + special


# --- what to break down by --------------------------------------------------------------------

@dataclass
class Plan:
    """The facets asked for, with the files they read, checked before anything is scored."""

    facets: list[str]
    facets_file: KeyedTable | None = None
    skills: KeyedTable | None = None


def plan(facets: Sequence[str], facets_file: str | os.PathLike | None = None,
         skills: str | os.PathLike | None = None) -> Plan:
    """Check the facet names against the built-in ones and the facets file's fields; read the
    files. Raises a one-line error for an unknown facet, a file without an id column,
    ``skill_category`` without a skills file, or a facet holding lists or objects."""
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
        _check_scalar(skills_table, CATEGORY_FIELD, "category")
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
        _check_scalar(table, name, "facet")
    return Plan(names, table, skills_table)


def plan_needed(facets: Sequence[str], facets_file: str | os.PathLike | None = None,
                skills: str | os.PathLike | None = None) -> Plan:
    """:func:`plan`, reading each file only when a facet needs it (the pipeline names both
    SkillRet files whatever the facets): the skills file for skill_category, the facets file
    for a facet that is not built in."""
    custom = any(f not in BUILTIN_FACETS for f in facets)
    return plan(facets, facets_file if custom else None,
                skills if "skill_category" in facets else None)


def requested(facets: Sequence[str] | None = None, facets_file: str | os.PathLike | None = None,
              skills: str | os.PathLike | None = None, params: str | os.PathLike | None = None
              ) -> tuple[Plan | None, str | None]:
    """The breakdown a command asks for, and the profile it is of (None: the first scored).

    ``--breakdown FACET ...``, or else ``eval.breakdown`` of ``--params`` (of
    ``eval.breakdown_profile`` when that profile is scored), so that a command given the
    pipeline's params.yaml writes what the pipeline writes. The files are ``--facets`` and
    ``--skills``, or else the params' ``data.queries`` and ``data.skills`` when a facet needs
    them. ``(None, None)`` when no breakdown is asked for.
    """
    profile, data = None, {}
    if params is not None:
        from skillret.pipeline.params import eval_params, load_yaml
        data = load_yaml(params).get("data") or {}
        if not facets:
            evaluation = eval_params(params)
            facets, profile = evaluation.breakdown, evaluation.breakdown_profile
    if not facets:
        return None, None
    custom = any(f not in BUILTIN_FACETS for f in facets)
    return plan(facets, facets_file or (data.get("queries") if custom else None),
                skills or (data.get("skills") if "skill_category" in facets else None)), profile


def _check_scalar(table: KeyedTable, name: str, what: str) -> None:
    if table.is_nested(name):
        raise InputError(table.path, f"{what} {name!r} holds lists or objects, not single "
                                     f"values (only skill_category gives a query several values)")
    for row, value in enumerate(table.values(name)):
        if isinstance(value, (list, dict)):
            kind = "a list" if isinstance(value, list) else "an object"
            raise InputError(table.path, f"{what} {name!r} holds {kind}, not a single value "
                                         f"(only skill_category gives a query several values)",
                             line=table.line(row))


def missing_queries(table: KeyedTable, judged_ids: Iterable[str]) -> list[str]:
    """Judged queries the facets file has no row for (they count under ``(missing)``)."""
    return [q for q in judged_ids if q not in table]


def missing_skills(table: KeyedTable, skill_ids: Iterable[str]) -> list[str]:
    """Skills (relevant in the qrels) the skills file has no row for."""
    return sorted({s for s in skill_ids if s not in table})


# --- the adapter to the engine ----------------------------------------------------------------

def profile_values(scores, profile) -> tuple[dict, dict]:
    """The one place this module reads a scored run (``skillret.score``'s :class:`Scores`).

    Returns the per-query values ``profile`` averages, one row per query of its query set, in
    the order the profile adds them (run order for the official set): a dict of arrays with
    ``query_id`` and the profile's metrics; and the judgments (see :func:`judgments`).
    """
    import numpy as np

    columns = scores.per_query_columns(profile)
    if profile.run_queries_only:
        judged_index = np.asarray(scores.results.judged_index)
        in_run = judged_index[judged_index >= 0]             # run order
        order = np.searchsorted(np.sort(in_run), in_run)
        columns = {name: np.asarray(values)[order] for name, values in columns.items()}
    return columns, judgments(scores.qrels)


def judgments(qrels) -> dict:
    """Loaded qrels (``skillret.read_qrels``) as arrays: query_id, skill_id (object arrays of
    str), relevance (int)."""
    import numpy as np

    return {"query_id": np.array(qrels.query_id.to_pylist(), dtype=object),
            "skill_id": np.array(qrels.skill_id.to_pylist(), dtype=object),
            "relevance": np.asarray(qrels.relevance)}


def pick_profile(scores, name: str | None = None):
    """The profile a breakdown uses: ``name``, or the first one scored."""
    if name is None:
        return scores.profiles[0]
    for p in scores.profiles:
        if p.name == name:
            return p
    raise ConfigError(f"breakdown profile {name!r} is not among the profiles scored "
                      f"({', '.join(p.name for p in scores.profiles)})")


# --- the breakdown ----------------------------------------------------------------------------

def _lookup(keys, values, wanted, default: str):
    """``values[i]`` where ``keys[i] == w`` for each ``w`` in ``wanted``, else ``default``."""
    import numpy as np

    keys = np.asarray(keys, dtype=object)
    wanted = np.asarray(wanted, dtype=object)
    out = np.full(len(wanted), default, dtype=object)
    if len(keys) == 0 or len(wanted) == 0:
        return out
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], wanted), len(keys) - 1)
    found = keys[order][at] == wanted
    out[found] = np.asarray(values, dtype=object)[order][at[found]]
    return out


def facet_strata(name: str, the_plan: Plan, query_ids, judgment_arrays: dict, level: int):
    """``(row, stratum)`` arrays: the strata of each query of ``query_ids`` (rows are positions
    in it); one per query for a scalar facet, one per category of its relevant skills for
    skill_category."""
    import numpy as np

    rows = np.arange(len(query_ids))
    if name in ("n_required", "n_relevant"):
        grade = REQUIRED_GRADE if name == "n_required" else level
        ids, inverse = np.unique(judgment_arrays["query_id"], return_inverse=True)
        counts = np.bincount(inverse, weights=judgment_arrays["relevance"] >= grade,
                             minlength=len(ids)).astype(np.int64)
        labels = _lookup(ids, [str(c) for c in counts.tolist()], query_ids, "0")
        return rows, labels
    if name == "skill_category":
        skills = the_plan.skills
        relevant = judgment_arrays["relevance"] >= level
        pair_query = _lookup(query_ids, rows, judgment_arrays["query_id"][relevant],
                             -1).astype(np.int64)
        categories = _lookup(skills.ids, [label(v) for v in skills.values(CATEGORY_FIELD)],
                             judgment_arrays["skill_id"][relevant], MISSING)
        keep = pair_query >= 0
        pair_query, categories = pair_query[keep], categories[keep]
        names, codes = np.unique(categories.astype(str), return_inverse=True)
        key = np.unique(pair_query * max(len(names), 1) + codes)   # a category once per query
        pair_rows, pair_labels = key // max(len(names), 1), names[key % max(len(names), 1)]
        without = np.setdiff1d(rows, pair_rows)
        return (np.concatenate([pair_rows, without]),
                np.concatenate([pair_labels.astype(object), np.full(len(without), NONE,
                                                                     dtype=object)]))
    table = the_plan.facets_file
    return rows, _lookup(table.ids, [label(v) for v in table.values(name)], query_ids, MISSING)


def breakdown(scores, the_plan: Plan, profile=None) -> dict:
    """``{facet: {stratum: {"queries": n, metric: mean, ...}}}`` for ``profile`` (a name or a
    Profile among those scored; default the first), strata in :func:`stratum_order`."""
    import numpy as np

    from skillret.scoring.aggregate import profile_mean
    from skillret.scoring.profiles import Profile

    prof = profile if isinstance(profile, Profile) else pick_profile(scores, profile)
    columns, judgment_arrays = profile_values(scores, prof)
    metrics = [m.short_name() for m in prof.parsed()]
    query_ids = np.asarray(columns["query_id"], dtype=object)
    out: dict[str, dict] = {}
    for name in the_plan.facets:
        rows, labels = facet_strata(name, the_plan, query_ids, judgment_arrays,
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


def coverage(the_plan: Plan, qrels, level: int = 1) -> dict:
    """Counts for validation: judged queries the facets file lacks, relevant skills (grade >=
    ``level``) the skills file lacks; each counts under ``(missing)`` in a breakdown."""
    table = judgments(qrels)
    out: dict = {}
    if the_plan.facets_file is not None:
        judged_queries = list(dict.fromkeys(table["query_id"].tolist()))
        lacking = missing_queries(the_plan.facets_file, judged_queries)
        out["facets"] = {"path": Path(the_plan.facets_file.path).as_posix(),
                         "judged_queries": len(judged_queries), "missing": len(lacking),
                         "examples": lacking[:5]}
    if the_plan.skills is not None:
        relevant = sorted(set(table["skill_id"][table["relevance"] >= level].tolist()))
        lacking = missing_skills(the_plan.skills, relevant)
        out["skills"] = {"path": Path(the_plan.skills.path).as_posix(),
                         "relevant_skills": len(relevant), "missing": len(lacking),
                         "examples": lacking[:5]}
    return out


def check_coverage(the_plan: Plan, qrels, level: int = 1, *, strict: bool = False) -> dict:
    """:func:`coverage` for validation (``qrels`` loaded or a path); with ``strict``, anything
    counted under ``(missing)`` is an error (:class:`~skillret.errors.ValidationFailed`)."""
    from skillret.errors import ValidationFailed

    if not hasattr(qrels, "query_id"):
        from skillret.io.readers import read_qrels
        qrels = read_qrels(qrels)
    counts = coverage(the_plan, qrels, level)
    warnings = coverage_warnings(counts)
    if strict and warnings:
        raise ValidationFailed(f"{len(warnings)} warning(s) under strict validation: "
                               + "; ".join(warnings))
    return counts


def add_coverage(report: dict, counts: dict) -> None:
    """Put :func:`coverage`'s counts in a validation report, its warnings among the others."""
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
    """A breakdown as plot data (``dvc plots``): one record per facet, stratum and metric,
    ``{"run", "facet", "stratum", "metric", "value", "queries"}`` in the breakdown's order
    (``run`` only when given)."""
    named = {} if run is None else {"run": run}
    return [{**named, "facet": facet, "stratum": stratum, "metric": metric, "value": value,
             "queries": row["queries"]}
            for facet, strata in result.items() for stratum, row in strata.items()
            for metric, value in row.items() if metric != "queries"]


def collect_plot(metrics: dict[str, str | os.PathLike]) -> list[dict]:
    """Plot records of every run's breakdown, from its metrics file (``{run: path}``), runs in
    the order given: one file that ``dvc plots`` draws with the runs side by side. A metrics
    file without a breakdown adds nothing (``eval.breakdown`` empty)."""
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

def stratified_tests(comparison, the_plan: Plan, qrels, *, permutations: int = 10000,
                     bootstrap: int = 2000, seed: int = 0, correction: str = "holm",
                     alpha: float = 0.05, rounding: int | None = 5, level: int = 1) -> dict:
    """The paired tests of a comparison (:func:`skillret.analysis.compare.compare`) within each stratum.

    ``{facet: {stratum: {"queries": n, "runs": {run: {metric: test}}}}}``: each test is the
    comparison's own (the same fields, seed and draws) on the paired queries of the stratum;
    the randomization p-values are adjusted with ``correction`` over the whole family, every
    (facet, stratum, run, metric) tested here, so that reading many strata does not find
    differences by chance. Strata follow :func:`stratum_order`; ``level`` is the relevance level
    of n_relevant and skill_category.
    """
    import numpy as np

    from skillret.analysis.compare import entry
    from skillret.analysis.significance import adjust, paired_tests

    ids = np.asarray(comparison.query_ids, dtype=object)
    judgment_arrays = judgments(qrels)
    names = list(comparison.pairs)
    metrics = list(next(iter(comparison.pairs.values()))[0]) if names else []
    columns = [(n, m) for n in names for m in metrics]
    keys, stats, sizes = [], [], {}
    for facet in the_plan.facets:
        rows, labels = facet_strata(facet, the_plan, ids, judgment_arrays, level)
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
        cell["runs"].setdefault(name, {})[metric] = entry(s, float(p), alpha, rounding)
    return out


def stage_strata(params: dict, source: str, qrels: str | os.PathLike | None,
                 metrics: Sequence[str]):
    """For the compare stage: ``eval.breakdown``'s facets (``skill_category`` from
    ``data.skills``, any other from ``data.queries``), as a function of a comparison giving
    :func:`stratified_tests`; None when ``eval.breakdown`` is empty."""
    from skillret.scoring.names import parse_metric
    from skillret.pipeline.params import EvalParams

    facets = EvalParams.from_mapping(params.get("eval"), source).breakdown
    if not facets:
        return None
    if qrels is None:
        raise ConfigError("eval.breakdown: the compare stage needs --qrels for the strata")
    from skillret.io.readers import read_qrels

    data = params.get("data") or {}
    the_plan = plan_needed(facets, data.get("queries"), data.get("skills"))
    loaded_qrels = read_qrels(qrels)
    level = parse_metric(metrics[0]).rel

    def tests(comparison, **settings):
        return stratified_tests(comparison, the_plan, loaded_qrels, level=level, **settings)
    return tests


def stratified_table(result: dict, correction: str = "holm") -> str:
    """The terminal's view of :func:`stratified_tests`: per facet, a row per stratum, run and
    metric with the delta, the adjusted p-value and a marker."""
    from skillret.analysis.compare import _fmt_p

    count = sum(len(m) for strata in result.values() for cell in strata.values()
                for m in cell["runs"].values())
    blocks = [f"within strata: p adjusted over all {count} tests below ({correction})"]
    for facet, strata in result.items():
        rows = [(facet, "queries", "run", "metric", "delta", "p_adj", "", "w/t/l")]
        for stratum, cell in strata.items():
            for run, metrics in cell["runs"].items():
                for metric, t in metrics.items():
                    rows.append((stratum, str(cell["queries"]), run, metric,
                                 f"{t['delta']:+.5f}", _fmt_p(t["p_adjusted"]),
                                 "*" if t["significant"] else "",
                                 f"{t['wins']}/{t['ties']}/{t['losses']}"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        blocks.append("\n".join("  ".join(
            c.ljust(w) if i in (0, 2, 3, 6) else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows))
    return "\n\n".join(blocks)


# --- terminal ---------------------------------------------------------------------------------

def breakdown_tables(result: dict, profile, evaluated: int | None = None) -> str:
    """One small table per facet: strata as rows, query counts and the profile's metrics."""
    from skillret.render.tables import format_value

    blocks = []
    for facet, strata in result.items():
        metrics = list(next(iter(strata.values()), {"queries": 0}))[1:]
        first = max([len(facet)] + [len(s) for s in strata])
        widths = [max(len(m), (profile.rounding or 5) + 2) for m in metrics]
        note = "; a query counts in each of its categories" if facet == "skill_category" else ""
        total = "" if evaluated is None else f": {evaluated} queries"
        lines = [f"{profile.name} by {facet}{total} ({profile.query_set}{note})",
                 f"  {facet:<{first}}  queries" + "".join(
                     f"  {m:>{w}}" for m, w in zip(metrics, widths))]
        for stratum, row in strata.items():
            lines.append(f"  {stratum:<{first}}  {row['queries']:>7}" + "".join(
                f"  {format_value(row[m], profile.rounding):>{w}}"
                for m, w in zip(metrics, widths)))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


__all__ = ["BUILTIN_FACETS", "MISSING", "NONE", "Plan", "plan", "plan_needed", "requested",
           "breakdown", "breakdown_tables", "coverage", "coverage_warnings", "check_coverage",
           "add_coverage", "label", "stratum_order", "read_keyed", "profile_values",
           "plot_records", "collect_plot", "stratified_tests", "stratified_table", "stage_strata"]
