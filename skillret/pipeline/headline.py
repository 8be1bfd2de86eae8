"""The headline: the few numbers the pipeline declares to DVC as metrics.

``metrics/headline.json`` holds, per run (registered and fused, sorted by name), the metrics of
``eval.headline`` (default ``[NDCG@10]``), each from the first profile of ``eval.profiles`` that
computes it, and, for every run but ``compare.baseline``, the verdict of the compare stage on
the first of them: ``delta`` (run minus baseline) and ``significant`` (its adjusted p <=
``compare.alpha``)::

    {"bm25-desc": {"NDCG@10": 0.63184, "delta": -0.15978, "significant": true},
     "bm25-full": {"NDCG@10": 0.79162}, ...}

so ``dvc exp show`` names a column ``bm25-desc.NDCG@10`` and ``dvc metrics diff`` prints one line
per headline value that changed. Every other number stays in the files it comes from
(``metrics/runs/<run>.json``, ``metrics/compare.json``), which ``dvc metrics show PATH`` reads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from skillret.errors import ConfigError, InputError


def headline_sources(evaluation, source: str = "params.yaml") -> list[tuple[str, str]]:
    """``[(metric, profile)]`` for ``eval.headline``: each metric with the first profile of
    ``eval.profiles`` that computes it; one line naming the key when none does."""
    from skillret.analysis.compare import metric_names
    from skillret.scoring.profiles import as_profiles as resolve

    try:
        names = metric_names(evaluation.headline)
    except (ConfigError, InputError) as exc:
        raise ConfigError(f"{source}: eval.headline: {exc}") from None
    profiles = resolve(evaluation.profiles, define=evaluation.define,
                       relevance_level=evaluation.relevance_level)
    sources = []
    for name in names:
        profile = next((p for p in profiles if name in metric_names(p.metrics)), None)
        if profile is None:
            raise ConfigError(f"{source}: eval.headline: {name} is computed by no profile of "
                              f"eval.profiles ({', '.join(p.name for p in profiles)})")
        sources.append((name, profile.name))
    return sources


def check_verdict(sources: list[tuple[str, str]], compared: list[str],
                  source: str = "params.yaml") -> str:
    """The metric the verdict is on (the first headline metric), which compare must test."""
    first = sources[0][0]
    if first not in compared:
        raise ConfigError(f"{source}: eval.headline starts with {first}, which compare.metrics "
                          f"does not test ({', '.join(compared)}): add it to compare.metrics")
    return first


def headline(runs: list[str], metrics_files: dict[str, str | os.PathLike],
             sources: list[tuple[str, str]], comparison: dict | None = None) -> dict:
    """``{run: {metric: value, ..., "delta": d, "significant": bool}}``, runs sorted."""
    first = sources[0][0]
    table = {}
    for run in sorted(runs):
        path = Path(metrics_files[run])
        try:
            scores = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"{path.as_posix()}: no such file (run {run!r} is not scored "
                             f"yet)") from None
        except (OSError, ValueError) as exc:
            raise InputError(f"{path.as_posix()}: not a metrics file ({exc})") from None
        row = {}
        for metric, profile in sources:
            try:
                row[metric] = scores[profile][metric]
            except (KeyError, TypeError):
                raise InputError(f"{path.as_posix()}: has no {profile}.{metric} (scored before "
                                 f"eval changed? dvc repro rescores it)") from None
        tested = ((comparison or {}).get("runs") or {}).get(run, {}).get(first)
        if tested is not None:
            row["delta"] = tested["delta"]
            row["significant"] = tested["significant"]
        table[run] = row
    return table


def summary_lines(table: dict, sources: list[tuple[str, str]], baseline: str | None,
                  alpha: float | None = None) -> list[str]:
    """The compare stage's screen: one line per run, the baseline first."""
    first, profile = sources[0]
    others = [m for m, _ in sources[1:]]
    order = ([baseline] if baseline in table else []) + [r for r in table if r != baseline]
    width = max(len(r) for r in order)
    head = f"{first} ({profile})" + "".join(f", {m}" for m in others)
    lines = [f"headline: {head} against {baseline}"
             + (f" (* p_adj <= {alpha:g})" if alpha is not None else "")]
    for run in order:
        row = table[run]
        values = "  ".join(f"{row[m]:.5f}" for m, _ in sources)
        if "delta" in row:
            verdict = f"{row['delta']:+.5f}{' *' if row['significant'] else ''}"
        else:
            verdict = "(baseline)" if run == baseline else ""
        lines.append(f"  {run.ljust(width)}  {values}  {verdict}".rstrip())
    return lines
