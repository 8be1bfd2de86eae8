"""The official path, as a SkillRet user runs it: read TREC qrels and a TREC run into dicts
(``line.split()``, ``int(grade)``, ``float(score)``), then SkillRet's ``trec_eval`` function
(pytrec_eval at 5/10/15, summed in result order, rounded to 5), and write the metrics as JSON.

    python benchmarks/official_path.py QRELS RUN OUTPUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# SkillRet's trec_eval, re-created once in the tests (it imports only pytrec_eval).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from reference import official_trec_eval as trec_eval  # noqa: E402


def read_qrels(path: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as fh:
        for line in fh:
            qid, _, skill, grade = line.split()
            qrels.setdefault(qid, {})[skill] = int(grade)
    return qrels


def read_run(path: str) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    with open(path) as fh:
        for line in fh:
            qid, _, skill, _rank, score, _tag = line.split()
            results.setdefault(qid, {})[skill] = float(score)
    return results


def main(argv: list[str]) -> int:
    qrels_path, run_path, output = argv
    metrics = trec_eval(read_qrels(qrels_path), read_run(run_path))
    with open(output, "w") as fh:
        json.dump(metrics, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
