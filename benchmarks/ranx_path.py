"""ranx, as its documentation shows: ``Qrels.from_file`` / ``Run.from_file`` (TREC), then
``evaluate`` at 5/10/15, written as JSON under skillret's metric names (unrounded).

ranx has no Completeness (every relevant skill within K), so those three are absent. ranx
orders tied scores its own way, so on ties its numbers may differ from trec_eval's.

    python benchmarks/ranx_path.py QRELS RUN OUTPUT.json
"""

from __future__ import annotations

import json
import sys

from ranx import Qrels, Run, evaluate

K_VALUES = (5, 10, 15)
NAMES = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "precision": "Precision"}


def main(argv: list[str]) -> int:
    qrels_path, run_path, output = argv
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    metrics = [f"{m}@{k}" for m in NAMES for k in K_VALUES]
    values = evaluate(qrels, run, metrics)
    out = {f"{NAMES[m.split('@')[0]]}@{m.split('@')[1]}": float(v) for m, v in values.items()}
    with open(output, "w") as fh:
        json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
