"""The example retriever, stage retrieve@<config>: BM25 over the skills with bm25s, the library
SkillRet's BM25 baseline uses. Replace it with your own retriever.

    python retrievers/bm25.py --config bm25-full --output runs/bm25-full.json

Reads `data` (skills, queries, split) and `retrieve` (k1, b, top_k, configs.<config>.fields) from
params.yaml and writes a run in SkillRet's results-JSON layout: ``{"metrics": {}, "retrieval":
{"<split>": {query: {skill: score}}}}``. Like SkillRet's baseline it tokenizes with
``bm25s.tokenize(..., stopwords="en")`` and keeps results with a positive score; unlike it, it
retrieves all queries in one batch and lets params.yaml choose k1, b and the indexed fields.

It imports nothing from skillret: editing the scoring package never reruns retrieval, and editing
this file reruns retrieval only (then the scoring of its runs, if their files changed). Bad
params end in one line naming the key, exit status 2, and no output written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Sequence

FIELDS = ("name", "description", "skill_md")


class ParamsError(Exception):
    """A bad value in params.yaml: one line for the user."""


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def skill_text(skill: dict, fields: Sequence[str]) -> str:
    """The indexed text: the chosen fields joined with `` | `` (SkillRet's composite text)."""
    return " | ".join((skill.get(f) or "").strip() for f in fields)


def check_settings(retrieve: object, config: str) -> dict:
    """``retrieve`` (params.yaml's section) checked for ``config``: k1, b, top_k, fields."""
    where = "params.yaml: retrieve"
    if not isinstance(retrieve, dict):
        raise ParamsError(f"{where} must be a mapping")
    unknown = set(retrieve) - {"k1", "b", "top_k", "configs"}
    if unknown:
        raise ParamsError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} "
                          f"(known: k1, b, top_k, configs)")

    def number(key: str, low: float, high: float | None = None) -> float:
        value = retrieve.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not low <= value <= (high if high is not None else float("inf")):
            bound = f"between {low} and {high}" if high is not None else f">= {low}"
            raise ParamsError(f"{where}.{key}: {value!r} is not a number {bound}")
        return float(value)

    top_k = retrieve.get("top_k")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        why = " (0 would score every query as 0)" if top_k == 0 else ""
        raise ParamsError(f"{where}.top_k: {top_k!r} is not a whole number >= 1{why}")
    configs = retrieve.get("configs")
    if not isinstance(configs, dict) or config not in configs:
        raise ParamsError(f"{where}.configs: no configuration named {config!r}")
    entry = configs[config] or {}
    if not isinstance(entry, dict) or set(entry) - {"fields"}:
        raise ParamsError(f"{where}.configs.{config}: expected a mapping with one key, fields")
    fields = entry.get("fields")
    if not isinstance(fields, list) or not fields or not set(map(str, fields)) <= set(FIELDS):
        raise ParamsError(f"{where}.configs.{config}.fields: {fields!r} is not a non-empty list "
                          f"drawn from {', '.join(FIELDS)}")
    return {"k1": number("k1", 0.0), "b": number("b", 0.0, 1.0), "top_k": top_k,
            "fields": [str(f) for f in fields]}


def retrieve(skills: list[dict], queries: list[dict], *, fields: Sequence[str],
             k1: float = 1.5, b: float = 0.75, top_k: int = 100) -> dict[str, dict[str, float]]:
    """``{query_id: {skill_id: score}}``, best first, positive scores only."""
    import bm25s
    import numpy as np

    ids = [s["id"] for s in skills]
    corpus = bm25s.tokenize([skill_text(s, fields) for s in skills], stopwords="en",
                            show_progress=False)
    index = bm25s.BM25(k1=k1, b=b)
    index.index(corpus, show_progress=False)
    tokens = bm25s.tokenize([q["query"] for q in queries], stopwords="en", show_progress=False)
    k = min(top_k, len(ids))
    hits, scores = index.retrieve(tokens, k=k, show_progress=False, n_threads=1)
    out: dict[str, dict[str, float]] = {}
    for query, row_hits, row_scores in zip(queries, hits, scores):
        keep = np.flatnonzero(row_scores > 0)
        out[str(query["id"])] = {ids[int(h)]: float(s) for h, s in
                                 zip(row_hits[keep], row_scores[keep])}
    return out


def write_results(path: str | os.PathLike, results: dict, split: str = "test") -> None:
    """SkillRet's results-JSON layout, written beside the target and renamed into place."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bm25.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"metrics": {}, "retrieval": {split: results}},
                                ensure_ascii=False) + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--config", required=True, help="name under retrieve.configs")
    parser.add_argument("--output", required=True, help="run file to write (results JSON)")
    args = parser.parse_args(argv)
    import yaml

    try:
        with open(args.params, encoding="utf-8") as fh:
            params = yaml.safe_load(fh) or {}
        settings = check_settings(params.get("retrieve"), args.config)
        data = params.get("data") or {}
        missing = [k for k in ("skills", "queries") if not isinstance(data.get(k), str)]
        if missing:
            raise ParamsError(f"params.yaml: data.{missing[0]} must name a JSONL file")
        results = retrieve(read_jsonl(data["skills"]), read_jsonl(data["queries"]),
                           fields=settings["fields"], k1=settings["k1"], b=settings["b"],
                           top_k=settings["top_k"])
        if not any(results.values()):
            raise ParamsError(f"every ranking is empty: every query would score 0 "
                              f"(config {args.config!r})")
        write_results(args.output, results, split=str(data.get("split", "test")))
    except ParamsError as exc:
        print(f"retrieve: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"retrieve: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    except (ValueError, KeyError, yaml.YAMLError) as exc:  # JSON lines, a skill or query without its fields
        print(f"retrieve: error: {args.params} or the data it names: {exc!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
