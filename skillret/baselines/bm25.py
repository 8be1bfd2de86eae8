"""An example retriever: BM25 over the skills with bm25s, the library SkillRet's BM25 baseline uses.

It is the stage a user replaces with their own retriever. Like SkillRet's baseline it tokenizes
with ``bm25s.tokenize(..., stopwords="en")``, keeps results with a positive score, and writes its
run in SkillRet's results-JSON layout: ``{"metrics": {}, "retrieval": {"<split>": {query:
{skill: score}}}}``. Unlike the baseline it retrieves all queries in one batch and lets the
caller choose k1, b and which skill fields are indexed.
"""

from __future__ import annotations

import json
import os
from typing import Sequence

FIELDS = ("name", "description", "skill_md")


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def skill_text(skill: dict, fields: Sequence[str]) -> str:
    """The indexed text: the chosen fields joined with `` | `` (SkillRet's composite text)."""
    return " | ".join((skill.get(f) or "").strip() for f in fields)


def retrieve(skills: list[dict], queries: list[dict], *, fields: Sequence[str],
             k1: float = 1.5, b: float = 0.75, top_k: int = 100) -> dict[str, dict[str, float]]:
    """``{query_id: {skill_id: score}}``, best first, positive scores only."""
    import bm25s
    import numpy as np

    unknown = set(fields) - set(FIELDS)
    if unknown or not fields:
        raise ValueError(f"fields must be a non-empty subset of {FIELDS}, not {list(fields)}")
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
    """SkillRet's results-JSON layout, written atomically with a stable format."""
    from ..atomic import write_text

    write_text(path, json.dumps({"metrics": {}, "retrieval": {split: results}},
                                ensure_ascii=False) + "\n")
