"""The file-producing steps the pipeline stages (and the CLI) call: read, compute, write last.

Each step takes paths, writes every output atomically and only after all its checks passed, so a
failing step leaves the previous outputs untouched. Nothing here knows about DVC: a stage script
parses its command line and ``params.yaml`` and calls one of these.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from . import __version__
from .outputs import write_json, write_per_query, write_qrels

TIE_RULE = ("score descending, compared as 32-bit floats (trec_eval keeps scores in a C float); "
            "equal scores broken by skill id, descending in byte order; rank columns ignored")


def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def normalize_qrels(qrels: str | os.PathLike, output: str | os.PathLike,
                    stats: str | os.PathLike | None = None, *, fmt: str | None = None,
                    split: str | None = None, columns: dict | None = None) -> dict:
    """Judgments in any format -> canonical TSV (query_id, skill_id, relevance), plus stats."""
    from .io import read_qrels

    judged = read_qrels(qrels, fmt=fmt, split=split, columns=columns)
    summary = judged.stats()
    write_qrels(output, judged)
    if stats is not None:
        write_json(stats, summary)
    return summary


def report_counts(report: dict) -> dict:
    """The numeric part of a validation report: what ``dvc metrics diff`` should compare."""
    return {
        "queries": report["queries"],
        "results": report["results"],
        "ties": report["ties"],
        "rank_disagreements": report["rank_column"]["disagreeing_rows"],
        "extra_fields": report["extra_fields"],
        "qrels_duplicates_dropped": report["qrels_duplicates_dropped"],
        "cross_check_differences": (report["cross_check"] or {}).get("differ", 0),
        "warnings": len(report["warnings"]),
    }


def validate_run(qrels: str | os.PathLike, run: str | os.PathLike, *,
                 normalized: str | os.PathLike | None = None,
                 report: str | os.PathLike | None = None,
                 metrics: str | os.PathLike | None = None, depth: int = 15,
                 strict: bool = False, fmt: str | None = None, split: str | None = None,
                 columns: dict | None = None) -> dict:
    """Validate a run; write the canonical run, the full report and its counts (if asked)."""
    from .validation import validate

    result = validate(qrels, run, depth=depth, strict=strict, normalized=normalized, fmt=fmt,
                      split=split, columns=columns)
    if report is not None:
        write_json(report, result)
    if metrics is not None:
        write_json(metrics, report_counts(result))
    return result


def score_run(qrels: str | os.PathLike, run: str | os.PathLike, *, profiles: list[str],
              relevance_level: int | None = None, define: dict | None = None,
              plot_profile: str | None = None, metrics: str | os.PathLike | None = None,
              per_query: str | os.PathLike | None = None,
              plots: str | os.PathLike | None = None,
              contract: str | os.PathLike | None = None, fmt: str | None = None,
              split: str | None = None, columns: dict | None = None):
    """Score a run under ``profiles``; write metrics, per-query values, plot data, contract.

    Plot data is a list of records ``{"k": K, "NDCG": ..., "Recall": ..., ...}`` for K = 1 up to
    the largest cutoff of the profiles, over the query set and relevance level of
    ``plot_profile`` (default: the first profile), rounded as that profile rounds.
    """
    from .io import open_run, read_qrels
    from .measures.registry import names as measure_names
    from .names import Metric
    from .profiles import Profile, resolve_profiles
    from .scoring import score

    resolved = resolve_profiles(profiles, define=define, relevance_level=relevance_level)
    base = next((p for p in resolved if p.name == (plot_profile or resolved[0].name)), None)
    if base is None:
        from .errors import ConfigError
        raise ConfigError(f"plot profile {plot_profile!r} is not among the profiles scored "
                          f"({', '.join(p.name for p in resolved)})")
    depth = max(p.depth for p in resolved)
    plotted = measure_names()
    curve = Profile("plot", tuple(f"{m}@{k}" for k in range(1, depth + 1) for m in plotted),
                    query_set=base.query_set, relevance_level=base.relevance_level,
                    rounding=base.rounding)
    judged = read_qrels(qrels, fmt=None, split=split, columns=columns)
    source = open_run(run, fmt=fmt, split=split, columns=columns)
    scores = score(judged, source, resolved + [curve])
    curve_values = scores.metrics.pop("plot")
    scores.query_counts["evaluated"].pop("plot")
    scores.profiles = resolved
    if metrics is not None:
        write_json(metrics, scores.to_dict())
    if per_query is not None:
        write_per_query(per_query, scores.per_query_columns())
    if plots is not None:
        records = [{"k": k, **{m: curve_values[Metric(m, k).short_name()] for m in plotted}}
                   for k in range(1, depth + 1)]
        write_json(plots, records)
    if contract is not None:
        write_json(contract, {
            "skillret_eval": __version__,
            "profiles": {p.name: p.describe() for p in resolved},
            "plot_profile": base.name,
            "tie_rule": TIE_RULE,
            "qrels": {"path": Path(qrels).as_posix(), "sha256": sha256(qrels)},
            "run": {"path": Path(run).as_posix(), "sha256": sha256(run)},
        })
    return scores
