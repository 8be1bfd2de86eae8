"""The reference the tests hold the engine to: pytrec_eval (trec_eval's C code), used the way
SkillRet's official evaluator uses it. Re-created here from its published source; nothing of
skillret is imported."""

from __future__ import annotations

import math

import pytrec_eval

#: a judgment no ranking holds (see evaluator)
UNRETRIEVED = "\x00never-retrieved"


def evaluator(qrels, measures, relevance_level=1):
    """pytrec_eval's RelevanceEvaluator, given a grade-0 judgment of UNRETRIEVED for each query
    judged only below 0. trec_eval sizes an array by the highest grade + 1, so such a query makes
    it write outside its memory: pytrec_eval 0.5.10 then crashes or loops forever, at random,
    often only some evaluations later. The added judgment changes no measure: the query has no
    relevant judgment either way (R = 0, so every measure is 0; bpref's min(R, N) too), and a
    judgment that is never retrieved moves no count of the ranking."""
    safe = {q: docs | {UNRETRIEVED: 0} if docs and max(docs.values()) < 0 else docs
            for q, docs in qrels.items()}
    return pytrec_eval.RelevanceEvaluator(safe, measures, relevance_level=relevance_level)


def official_trec_eval(qrels, results, k_values=(5, 10, 15)):
    """SkillRet's official ``trec_eval``: pytrec_eval at k_values, summed in result order with
    ``+=``, divided by max(n, 1), rounded to 5 with ``round``."""
    ndcg = {f"NDCG@{k}": 0.0 for k in k_values}
    _map = {f"MAP@{k}": 0.0 for k in k_values}
    recall = {f"Recall@{k}": 0.0 for k in k_values}
    prec = {f"Precision@{k}": 0.0 for k in k_values}
    comp = {f"Completeness@{k}": 0.0 for k in k_values}
    ks = ",".join(str(k) for k in k_values)
    scores = evaluator(qrels, {"map_cut." + ks, "ndcg_cut." + ks, "recall." + ks,
                               "P." + ks}).evaluate(results)
    for query_id in scores:
        for k in k_values:
            ndcg[f"NDCG@{k}"] += scores[query_id][f"ndcg_cut_{k}"]
            _map[f"MAP@{k}"] += scores[query_id][f"map_cut_{k}"]
            recall[f"Recall@{k}"] += scores[query_id][f"recall_{k}"]
            prec[f"Precision@{k}"] += scores[query_id][f"P_{k}"]
            comp[f"Completeness@{k}"] += float(scores[query_id][f"recall_{k}"] == 1.0)
    n = max(len(scores), 1)
    out = {}
    for block in (ndcg, _map, recall, prec, comp):
        out.update({key: round(value / n, 5) for key, value in block.items()})
    return out


TREC_NAMES = {"NDCG": "ndcg_cut_{k}", "MAP": "map_cut_{k}", "Recall": "recall_{k}",
              "Precision": "P_{k}"}


def per_query(qrels, results, ks, relevance_level=1):
    """pytrec_eval's per-query values, plus Completeness (recall == 1) and MRR@K computed as
    recip_rank on the ranking cut to its top K (tie rule applied in Python)."""
    ks = sorted(set(ks))
    kstr = ",".join(map(str, ks))
    raw = evaluator(qrels, {"map_cut." + kstr, "ndcg_cut." + kstr, "recall." + kstr,
                            "P." + kstr}, relevance_level).evaluate(results)
    out = {}
    for q, values in raw.items():
        row = {}
        for k in ks:
            for measure, name in TREC_NAMES.items():
                row[(measure, k)] = values[name.format(k=k)]
            row[("Completeness", k)] = float(values[f"recall_{k}"] == 1.0)
        out[q] = row
    for k in ks:
        cut = {q: dict(top_k(results[q], k)) for q in raw}
        rr = evaluator(qrels, {"recip_rank"}, relevance_level).evaluate(cut)
        for q in raw:
            out[q][("MRR", k)] = rr[q]["recip_rank"] if q in rr else 0.0
    return out


def top_k(ranking: dict, k: int):
    """trec_eval's order: score descending as a C float (trec_eval stores scores in a float),
    then id descending in byte order."""
    import numpy  # here, so that the benchmark's official path pays only for pytrec_eval

    with numpy.errstate(over="ignore"):
        ordered = sorted(ranking.items(), key=lambda kv: (numpy.float32(kv[1]), kv[0].encode()),
                         reverse=True)
    return ordered[:k]


def all_judged_mean(qrels, per_query_values, key):
    """Mean over every judged query (a query without values scores 0), exactly rounded sum."""
    judged = [q for q, docs in qrels.items() if docs]
    total = math.fsum(per_query_values[q][key] for q in judged if q in per_query_values)
    return total / max(len(judged), 1)


#: pytrec_eval's names of the measures read over the whole ranking, by skillret's name
WHOLE = {"NDCG": "ndcg", "MAP": "map", "MRR": "recip_rank", "RPrec": "Rprec", "Bpref": "bpref"}


def per_query_more(qrels, results, ks, relevance_level=1):
    """pytrec_eval's per-query ``success_K`` and the whole-ranking measures (``ndcg``, ``map``,
    ``recip_rank``, ``Rprec``, ``bpref``), keyed (measure, K) and (measure, None)."""
    ks = sorted(set(ks))
    success = "success." + ",".join(map(str, ks))
    raw = evaluator(qrels, {success, *WHOLE.values()}, relevance_level).evaluate(results)
    return {q: {("Success", k): values[f"success_{k}"] for k in ks}
            | {(name, None): values[trec] for name, trec in WHOLE.items()}
            for q, values in raw.items()}


def judged(qrels, results, ks):
    """ir_measures' per-query ``Judged@K`` and ``Judged``, keyed (``Judged``, K or None), over
    the ranking in trec_eval's order (its own tie order differs: the scores handed to it are
    the ranks, so that it ranks as trec_eval does). ir_measures divides by zero on an empty
    ranking, so those are not handed to it."""
    import ir_measures

    ranked = {q: {doc: float(len(r) - i) for i, (doc, _) in enumerate(top_k(r, len(r)))}
              for q, r in results.items() if r}
    measures = [ir_measures.Judged @ k for k in sorted(set(ks))] + [ir_measures.Judged]
    out: dict = {}
    for value in ir_measures.judged.iter_calc(measures, qrels, ranked):
        cutoff = value.measure["cutoff"] if "cutoff" in value.measure.params else None
        out.setdefault(value.query_id, {})[("Judged", cutoff)] = value.value
    return out
