"""`skillret-eval measures`: every measure, its definition, its names in other tools, and whether
the official evaluator computes it."""

from __future__ import annotations

import json
import textwrap

from skillret.measures.registry import TOOLS, catalogue


def measures(args) -> int:
    """The listing (one block per measure, K standing for a cutoff), or its rows as JSON."""
    rows = catalogue()
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    out = []
    for row in rows:
        official = "computed by SkillRet's official evaluator" if row["official"] \
            else "not in SkillRet's official evaluator"
        out.append(f"{'  '.join(row['forms'])}    ({official})")
        out.extend(textwrap.wrap(row["summary"], 98, initial_indent="  ",
                                 subsequent_indent="  "))
        for label, names in [*((tool, row["tools"][tool]) for tool in TOOLS),
                             ("also", row["aliases"])]:
            if names:
                out.append(f"  {label + ':':<13}{', '.join(names)}")
        out.append("")
    out.extend(textwrap.wrap(
        "Names are not case-sensitive; K is a cutoff (ndcg_cut_K, ndcg_cut.K and nDCG@K "
        "alike); a relevance level is written Name(rel=N)@K. `skillret-eval profiles` prints "
        "each measure's full definition.", 100))
    print("\n".join(out))
    return 0
