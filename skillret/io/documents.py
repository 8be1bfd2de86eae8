"""JSON documents and SkillRet's own files: its results JSON (`metrics` and
`retrieval` by split), plain `{query: {skill: score|grade}}` mappings, its queries JSONL
(judgments in `labels` or `skill_ids`), and its data directory.
"""

from __future__ import annotations

import json
import math
from itertools import chain
from pathlib import Path

import numpy as np

from skillret import limits
from skillret.columnar.convert import flatten_nested, integral_grades
from skillret.errors import Fix, InputError
from skillret.columnar.qrels import Qrels
from skillret.columnar.runs import Run
from skillret.io.sniff import decode_utf8, json_error_reason, json_kind, read_bytes

SPLIT_FIX = Fix("--split", "NAME", "split")


class _Repeated(dict):
    """A JSON object in which `key` appears twice."""

    key: str = ""


def _refuse_repeats(path: Path):
    """An `object_pairs_hook` that refuses a repeated key, naming its parent key too."""

    def hook(pairs):
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set = set()
            repeated = _Repeated(obj)
            repeated.key = next(k for k, _ in pairs if k in seen or seen.add(k))
            return repeated
        for key, value in obj.items():
            if type(value) is _Repeated:
                raise InputError(path, f"{key!r} lists {value.key!r} twice",
                                 hint="each skill may appear once per query (trec_eval refuses "
                                      "duplicates too); each key once per object")
        return obj

    return hook


def load_json(path: Path):
    """A JSON document; InputError beyond the size or depth limits, or for a repeated key."""
    data = read_bytes(path)
    depth = limits.current().json_depth
    deep = _too_deep(data, depth)
    if deep is not None:
        raise InputError(path, f"JSON nested deeper than {depth} levels",
                         line=data.count(b"\n", 0, deep) + 1,
                         hint="raise the limit with --max-json-depth")
    text = decode_utf8(path, data)
    del data
    try:
        doc = json.loads(text, object_pairs_hook=_refuse_repeats(path))
    except ValueError as exc:  # JSONDecodeError, or an integer of over 4,300 digits
        raise InputError(path, f"malformed JSON ({json_error_reason(exc)})",
                         line=getattr(exc, "lineno", None)) from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise InputError(path, "JSON nested too deeply", hint="lower --max-json-depth") from None
    if type(doc) is _Repeated:
        raise InputError(path, f"key {doc.key!r} appears twice at the top level",
                         hint="each query once")
    return doc


def _too_deep(data: bytes, limit: int) -> int | None:
    """The offset of the first bracket (outside strings) nested deeper than `limit`, else
    None."""
    raw = np.frombuffer(data, dtype=np.uint8)
    brackets = _positions(raw, lambda c: (c == 91) | (c == 123) | (c == 93) | (c == 125))
    # escaped quotes blanked (same length): pairs of backslashes first, then one before a quote
    unescaped = np.frombuffer(data.replace(b"\\\\", b"  ").replace(b'\\"', b"  "), np.uint8)
    outside = np.searchsorted(_positions(unescaped, lambda c: c == 34), brackets) % 2 == 0
    brackets = brackets[outside]
    kind = raw[brackets]
    depth = np.cumsum(np.where((kind == 91) | (kind == 123), 1, -1))
    over = np.flatnonzero(depth > limit)
    return int(brackets[over[0]]) if len(over) else None


def _positions(raw: np.ndarray, test, step: int = 1 << 26) -> np.ndarray:
    """Offsets where `test` holds, 64 MiB at a time (bounds temporary memory)."""
    parts = [np.flatnonzero(test(raw[i:i + step])) + i for i in range(0, len(raw), step)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def pick_split(path: Path, splits: dict, split: str | None, what: str) -> tuple[str, dict]:
    if not isinstance(splits, dict) or not splits:
        raise InputError(path, f"'{what}' must map split names to rankings, e.g. "
                               f"{{\"test\": {{query: {{skill: score}}}}}}")
    if split is None:  # the only split, else "test"
        split = next(iter(splits)) if len(splits) == 1 else "test" if "test" in splits else None
    if split not in splits:
        shown = ", ".join(map(str, splits))
        raise InputError(path, f"holds several splits ({shown})" if split is None else
                         f"has no split {split!r} (splits: {shown})",
                         hint="choose one: {fix}", fix=SPLIT_FIX)
    return split, splits[split]


def run_from_document(doc, path: Path | None, *, split: str | None = None,
                      layout: str | None = None) -> Run:
    """A run from parsed JSON: SkillRet's results layout or `{query: {skill: score}}`."""
    if not isinstance(doc, dict):
        raise InputError(path, f"JSON of the wrong shape: expected an object, found "
                               f"{type(doc).__name__}",
                         hint="a run is {query: {skill: score}} or SkillRet's results JSON")
    metadata, nested = None, doc
    if layout == "skillret-json" or (layout is None and is_results_layout(doc)):
        if "retrieval" not in doc:
            raise InputError(path, "is not SkillRet's results JSON: no 'retrieval' key")
        split, nested = pick_split(path, doc["retrieval"], split, "retrieval")
        metrics = doc.get("metrics")  # the numbers for `split` ({split: {...}} or flat)
        if isinstance(metrics, dict) and isinstance(metrics.get(split), dict):
            metrics = metrics[split]
        # NaN and infinities are kept: the cross-check reports them
        metrics = {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not
                   isinstance(v, bool) and (isinstance(v, float) or _finite(v))} \
            if isinstance(metrics, dict) else None
        metadata = {"layout": "skillret-json", "split": split, "metrics": metrics or None}
    _check_values(path, nested, "run")
    source = None if path is None else str(path)
    try:
        qid, sid, score, queries = flatten_nested(nested, what="run", source=source)
    except InputError as exc:
        if "not a finite number" not in exc.reason:
            raise
        _check_values(path, nested, "run", finite=True)
        raise  # a value `_check_values` does not see as one: the reader's own error
    return Run(qid, sid, score, queries, source=source, metadata=metadata)


def is_results_layout(doc) -> bool:
    """Is this parsed JSON SkillRet's results layout? `retrieval` nests three levels deep
    (split -> query -> skill); in a plain run a query called "retrieval" would nest two."""
    splits = doc.get("retrieval") if isinstance(doc, dict) else None
    if not isinstance(splits, dict) or not splits:
        return False
    first = next(iter(splits.values()))
    return isinstance(first, dict) and (not first or isinstance(next(iter(first.values())), dict))


def _finite(value: int | float) -> bool:
    """A JSON number that is finite as a double (an integer of 400 digits is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _check_values(path: Path, nested: dict, kind: str, finite: bool = False) -> None:
    """InputError naming the query and skill (JSON has no useful line numbers) of the first
    score or grade that is not a JSON number (bool, str, null), or with `finite` not finite."""
    what = "score" if kind == "run" else "grade"
    values = chain.from_iterable(d.values() for d in nested.values() if isinstance(d, dict))
    if not finite and set(map(type, values)) <= {int, float}:
        return
    for q, docs in nested.items():
        for s, v in (docs.items() if isinstance(docs, dict) else ()):
            if finite and type(v) is float and not math.isfinite(v):
                raise InputError(path, f"score {str(v)!r} of skill {s!r} for query {q!r} is not "
                                       f"a finite number") from None
            if type(v) not in (int, float):
                raise InputError(path, f"{kind} holds a value that is not a number: {what} of "
                                       f"skill {s!r} for query {q!r} is {json_kind(v)} "
                                       f"{json.dumps(v)[:40]}")


def read_json_qrels(path: Path) -> Qrels:
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise InputError(path, f"JSON of the wrong shape: expected {{query: {{skill: grade}}}}, "
                               f"found {type(doc).__name__}")
    _check_values(path, doc, "qrels")
    qid, sid, grade = flatten_nested(doc, what="qrels", integral=True, source=str(path))
    return Qrels.from_columns(qid, sid, grade, source=str(path))


def qrels_from_queries(numbered, path: Path | None) -> Qrels:
    """Judgments from (line number, query object) pairs: SkillRet's queries JSONL, whose
    judgments are in `labels` or `skill_ids`."""
    qids, sids, grades, lines = [], [], [], []
    for number, item in numbered:
        qid = item.get("id", item.get("query_id"))
        if qid is None:
            raise InputError(path, "query has no 'id'", line=number)
        for sid, grade in _labels(path, number, item):
            qids.append(str(qid))
            sids.append(sid)
            grades.append(grade)
            lines.append(number)
    if not qids:
        raise InputError(path, "holds no judgments (no query has labels or skill_ids)")
    source = None if path is None else str(path)
    lines = np.array(lines) if path is not None else None
    grades = integral_grades(np.array(grades, dtype=np.float64), source=source, lines=lines)
    return Qrels.from_columns(qids, sids, grades, source=source, lines=lines)


def _labels(path: Path, number: int, item: dict):
    if "labels" in item:
        labels = item["labels"]
        if isinstance(labels, str):
            try:
                labels = json.loads(labels)
            except ValueError as exc:
                raise InputError(path, f"'labels' is a string but not JSON "
                                       f"({json_error_reason(exc)})", line=number) from None
        if not isinstance(labels, list):
            raise InputError(path, "'labels' must be a list of {id, relevance}", line=number)
        for label in labels:
            if not isinstance(label, dict) or "id" not in label:
                raise InputError(path, "each label must be an object with 'id' and "
                                       "'relevance'", line=number)
            grade = label.get("relevance", 1)
            if isinstance(grade, bool) or not isinstance(grade, (int, float)):
                raise InputError(path, f"relevance {json.dumps(grade)[:40]} is not a number",
                                 line=number)
            if not _finite(grade) or grade != int(grade):
                raise InputError(path, f"grade {str(grade)[:40]} is not an integer", line=number,
                                 hint="grades are integers such as 0, 1, 2")
            yield str(label["id"]), grade
    elif "skill_ids" in item:
        skill_ids = item["skill_ids"]
        if isinstance(skill_ids, str):
            try:
                skill_ids = json.loads(skill_ids)
            except ValueError:
                skill_ids = [skill_ids]
        if not isinstance(skill_ids, list):
            raise InputError(path, "'skill_ids' must be a list", line=number)
        for sid in skill_ids:
            yield str(sid), 1
    else:
        raise InputError(path, "query has neither 'labels' nor 'skill_ids'", line=number)


def skillret_dir_qrels(path: Path, split: str | None) -> tuple[Path, str]:
    """(file, format): `qrels/<split>.jsonl[.gz]`, else `queries/<split>.jsonl[.gz]`."""
    split = split or "test"
    for sub, fmt in (("qrels", "jsonl"), ("queries", "queries-jsonl")):
        for ext in (".jsonl", ".jsonl.gz"):
            candidate = path / sub / f"{split}{ext}"
            if candidate.is_file():
                return candidate, fmt
    raise InputError(path, f"is a directory without qrels/{split}.jsonl or "
                           f"queries/{split}.jsonl", hint="point --qrels at the file, or {fix}",
                   fix=SPLIT_FIX)
