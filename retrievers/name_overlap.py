"""A second example retriever, run by hand rather than by DVC: word overlap between a query and a
skill's name and description. It stands for "your retriever": its output is a TSV with its own
column names (request, skill_uuid, overlap), which the README registers with ``skillret-eval register``.

    python retrievers/name_overlap.py --output results/name-overlap.tsv
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

WORD = re.compile(r"[a-z0-9]{3,}")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--skills", default="data/sample/skills/test.jsonl")
    parser.add_argument("--queries", default="data/sample/queries/test.jsonl")
    parser.add_argument("--top-k", type=int, default=20)
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    with open(args.skills, encoding="utf-8") as fh:
        skills = [json.loads(line) for line in fh if line.strip()]
    with open(args.queries, encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh if line.strip()]
    index = [(s["id"], words(s["name"].replace("-", " ") + " " + s["description"]))
             for s in skills]
    lines = ["request\tskill_uuid\toverlap"]
    for query in queries:
        asked = words(query["query"])
        scored = sorted(((len(asked & vocab) / len(vocab) ** 0.5, skill) for skill, vocab in index
                         if asked & vocab), key=lambda pair: (-pair[0], pair[1]))
        lines += [f"{query['id']}\t{skill}\t{score:.6f}" for score, skill in scored[:args.top_k]]
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"{args.output}: {len(queries)} queries, {len(lines) - 1} results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
