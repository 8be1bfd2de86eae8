"""JSON documents and SkillRet's own files.

* SkillRet's results JSON, as its evaluator writes it:
  ``{"metrics": {"<split>": {...}}, "retrieval": {"<split>": {query: {skill: score}}}}``;
* a plain mapping ``{query: {skill: score}}`` (runs) or ``{query: {skill: grade}}`` (qrels);
* SkillRet's queries JSONL, whose ``labels`` (a list, or a JSON string of a list, of
  ``{id, relevance}``) or ``skill_ids`` (binary, grade 1) carry the judgments;
* a SkillRet data directory: ``qrels/<split>.jsonl``, else ``queries/<split>.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..convert import flatten_nested
from ..errors import InputError
from ..judgments import Qrels
from ..runs import Run
from .tabular import read_bytes


class _Repeated(dict):
    """A JSON object in which ``key`` appears twice (the standard parser keeps the last)."""

    key: str = ""


def _refuse_repeats(path: Path):
    """An ``object_pairs_hook`` that refuses a repeated key, naming its parent key too."""

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
    data = read_bytes(path)
    try:
        doc = json.loads(data.decode("utf-8-sig"), object_pairs_hook=_refuse_repeats(path))
    except UnicodeDecodeError:
        raise InputError(path, "is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON ({exc.msg})", line=exc.lineno) from None
    if type(doc) is _Repeated:
        raise InputError(path, f"key {doc.key!r} appears twice at the top level",
                         hint="each query once")
    return doc


def pick_split(path: Path, splits: dict, split: str | None, what: str) -> tuple[str, dict]:
    if not isinstance(splits, dict) or not splits:
        raise InputError(path, f"'{what}' must map split names to rankings, e.g. "
                               f"{{\"test\": {{query: {{skill: score}}}}}}")
    if split is None:
        if len(splits) == 1:
            split = next(iter(splits))
        elif "test" in splits:
            split = "test"
        else:
            raise InputError(path, f"holds several splits ({', '.join(map(str, splits))})",
                             hint="choose one with --split")
    if split not in splits:
        raise InputError(path, f"has no split {split!r} (splits: {', '.join(map(str, splits))})",
                         hint="choose one with --split")
    return split, splits[split]


def read_json_run(path: Path, *, split: str | None = None, layout: str | None = None) -> Run:
    """A run from SkillRet's results JSON or a plain ``{query: {skill: score}}`` mapping."""
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise InputError(path, f"JSON of the wrong shape: expected an object, found "
                               f"{type(doc).__name__}",
                         hint="a run is {query: {skill: score}} or SkillRet's results JSON")
    metadata = None
    if layout == "skillret-json" or (layout is None and _is_results_layout(doc)):
        if "retrieval" not in doc:
            raise InputError(path, "is not SkillRet's results JSON: no 'retrieval' key")
        split, nested = pick_split(path, doc["retrieval"], split, "retrieval")
        metadata = {"layout": "skillret-json", "split": split,
                    "metrics": _split_metrics(doc.get("metrics"), split)}
    else:
        nested = doc
    qid, sid, score, queries = _flatten(path, nested, "run")
    return Run(qid, sid, score, queries, source=str(path), metadata=metadata)


def _is_results_layout(doc: dict) -> bool:
    """``retrieval`` nests three levels deep (split -> query -> skill); in a plain run a query
    called "retrieval" would nest two."""
    splits = doc.get("retrieval")
    if not isinstance(splits, dict) or not splits:
        return False
    first = next(iter(splits.values()))
    return isinstance(first, dict) and (not first or isinstance(next(iter(first.values())), dict))


def _split_metrics(metrics, split: str) -> dict | None:
    """The metrics the file carries for ``split`` ({split: {...}} or a flat mapping)."""
    if not isinstance(metrics, dict) or not metrics:
        return None
    if isinstance(metrics.get(split), dict):
        metrics = metrics[split]
    flat = {k: v for k, v in metrics.items() if isinstance(v, (int, float))
            and not isinstance(v, bool)}
    return flat or None


def _flatten(path: Path, nested, what: str):
    try:
        return flatten_nested(nested, what=what, source=str(path))
    except InputError as exc:
        if "not a finite number" in exc.reason:
            # name the query and skill: a JSON document has no useful line numbers
            for q, docs in nested.items():
                for s, v in docs.items():
                    if isinstance(v, (int, float)) and not np.isfinite(v):
                        raise InputError(path, f"score {str(v)!r} of skill {s!r} for query "
                                               f"{q!r} is not a finite number") from None
        raise


def read_json_qrels(path: Path) -> Qrels:
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise InputError(path, f"JSON of the wrong shape: expected {{query: {{skill: grade}}}}, "
                               f"found {type(doc).__name__}")
    qid, sid, grade = flatten_nested(doc, what="qrels", integral=True, source=str(path))
    return Qrels.from_columns(qid, sid, grade, source=str(path))


def read_queries_jsonl(path: Path) -> Qrels:
    """Judgments from SkillRet's queries JSONL (``labels`` or ``skill_ids``)."""
    text = read_bytes(path).decode("utf-8-sig", errors="strict")
    qids, sids, grades, lines = [], [], [], []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InputError(path, f"malformed JSON ({exc.msg})", line=number) from None
        if not isinstance(item, dict):
            raise InputError(path, "each line must be a JSON object", line=number)
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
    return Qrels.from_columns(qids, sids, np.array(grades, dtype=np.float64), source=str(path),
                              lines=np.array(lines))


def _labels(path: Path, number: int, item: dict):
    if "labels" in item:
        labels = item["labels"]
        if isinstance(labels, str):
            try:
                labels = json.loads(labels)
            except ValueError as exc:
                raise InputError(path, f"'labels' is a string but not JSON ({exc.msg})",
                                 line=number) from None
        if not isinstance(labels, list):
            raise InputError(path, "'labels' must be a list of {id, relevance}", line=number)
        for label in labels:
            if not isinstance(label, dict) or "id" not in label:
                raise InputError(path, "each label must be an object with 'id' and "
                                       "'relevance'", line=number)
            grade = label.get("relevance", 1)
            if isinstance(grade, bool) or not isinstance(grade, (int, float)):
                raise InputError(path, f"relevance {grade!r} is not a number", line=number)
            if grade != grade or grade != int(grade):
                raise InputError(path, f"grade {grade!r} is not an integer", line=number,
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
    """The file inside a SkillRet data directory: ``qrels/<split>.jsonl``, else the queries."""
    split = split or "test"
    for sub, fmt in (("qrels", "jsonl"), ("queries", "queries-jsonl")):
        for ext in (".jsonl", ".jsonl.gz"):
            candidate = path / sub / f"{split}{ext}"
            if candidate.is_file():
                return candidate, fmt
    raise InputError(path, f"is a directory without qrels/{split}.jsonl or "
                           f"queries/{split}.jsonl", hint="point --qrels at the file, or pass "
                                                          "--split")
