"""Whether two results can be compared: what each number was computed against (a metrics
file's `judgments` and `contract`), and, between two revisions, what differs.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from skillret import __version__
from skillret.errors import ConfigError

ALLOW = "--allow-different-judgments"


def counts(qrels, level: int = 1) -> dict:
    """Judged queries, judged pairs, and pairs graded `level` or above."""
    return {"queries": int(len(qrels.queries)), "pairs": int(len(qrels)),
            "relevant": int(qrels.relevant_counts(level).sum())}


def contract(resolved) -> dict:
    """The metric contract: version, tie rule, each profile's query set, level and cutoffs."""
    return {"skillret_eval": __version__, "tie_rule": "trec_eval",
            "profiles": {p.name: {"query_set": p.query_set, "relevance_level": p.relevance_level,
                                  "cutoffs": sorted({m.k for m in p.parsed() if m.k})}
                         for p in resolved}}


def count_of(n: int, one: str, many: str | None = None) -> str:
    """`n` and what it counts: `one`, or `many` (by default `one` + "s")."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def judgments_between(old: dict, new: dict) -> tuple[list[str], set[str]]:
    """The differences between two judgments, worded (empty: the same), and the queries judged
    identically at both."""
    added, removed = set(new) - set(old), set(old) - set(new)
    changed = [(q, s, old[q].get(s), new[q].get(s)) for q in sorted(set(old) & set(new))
               if old[q] != new[q] for s in sorted(set(old[q]) | set(new[q]))
               if old[q].get(s) != new[q].get(s)]
    differences = []
    for ids, what in ((added, "added"), (removed, "removed")):
        if ids:
            shown = ", ".join(sorted(ids)[:3]) + (", ..." if len(ids) > 3 else "")
            differences.append(f"{count_of(len(ids), 'query', 'queries')} {what} ({shown})")
    if changed:
        query, skill, before, after = changed[0]
        grade = (lambda v: "unjudged" if v is None else f"grade {v}")
        queries = len({q for q, *_ in changed})
        differences.append(f"{count_of(len(changed), 'judgment')} changed in "
                           f"{count_of(queries, 'query', 'queries')} (e.g. {query} {skill}: "
                           f"{grade(before)} -> {grade(after)})")
    same = {q for q in set(old) & set(new) if old[q] == new[q]}
    return differences, same


def contracts_between(old: dict, new: dict) -> list[str]:
    """What differs between two metric contracts (a validation report's `contract`)."""
    out = []
    if old.get("skillret_eval") != new.get("skillret_eval"):
        out.append(f"skillret-eval {old.get('skillret_eval')} -> {new.get('skillret_eval')}")
    if old.get("tie_rule") != new.get("tie_rule"):
        out.append("the tie rule")
    before, after = old.get("profiles") or {}, new.get("profiles") or {}
    for name in sorted(set(before) & set(after)):
        a, b = before[name], after[name]
        for key, what in (("relevance_level", "relevance level"), ("query_set", "query set")):
            if a.get(key) != b.get(key):
                out.append(f"{name}'s {what} {a.get(key)} -> {b.get(key)}")
        if a.get("metrics") != b.get("metrics"):
            out.append(f"{name}'s metrics (cutoffs)")
    return out


def check(old, new, runs: list[str], allow: bool) -> tuple[set[str] | None, str | None]:
    """Refuse revisions whose judgments or contracts (of `runs`) differ; with `allow`, note it.
    Returns (queries to keep, None: all; the header note, None: comparable). The judgments'
    files are read only when the metrics files' fingerprints differ or are missing."""
    digest = old.judgments(runs[0]).get("sha256") if runs else None
    if digest is not None and digest == new.judgments(runs[0]).get("sha256"):
        differences, same = [], None  # the same judgments: their files need not be read
    else:
        differences, same = judgments_between(old.qrels().to_dict(), new.qrels().to_dict())
    for run in runs:
        before, after = old.contract(run), new.contract(run)
        found = contracts_between(before, after) if before and after else []
        if found:
            differences += [f"{run}: {d}" for d in found]
            break
    if not differences:
        return None, None
    count = new.judgments(runs[0]).get("queries") if same is None else len(same)
    what = "; ".join(differences)
    if not allow:
        raise ConfigError(f"{old.label} and {new.label} were not scored alike: {what}; "
                          f"{ALLOW} compares the {count} queries judged the same at both")
    return same, (f"Not comparable as is: {old.label} and {new.label} were not scored alike "
                  f"({what}); compared on the {count} queries judged the same at both "
                  f"({ALLOW})")


def restricted(tables: dict, keep: set[str] | None) -> dict:
    """`{name: PerQuery}` with only the queries in `keep` (all of them when None)."""
    if keep is None:
        return tables
    wanted = np.array(sorted(keep), dtype=object)
    out = {}
    for name, table in tables.items():
        mask = np.isin(table.query_ids.astype(object), wanted)
        out[name] = replace(table, query_ids=table.query_ids[mask],
                            values={m: v[mask] for m, v in table.values.items()})
    return out


def headed(text: str, header: str | None, fmt: str) -> str:
    """`text` with `header` first (after the title in Markdown: it marks the PR comment)."""
    if header is None or fmt == "csv":
        return text
    if fmt == "markdown":
        title, _, rest = text.partition("\n\n")
        return f"{title}\n\n> **{header}**\n\n{rest}"
    if fmt == "json":
        return json.dumps({"note": header, **json.loads(text)}, indent=2,
                          ensure_ascii=False) + "\n"
    return f"{header}\n{text}"
