"""Stage retrieve@<config>: the example BM25 retriever (replace it with your own).

Reads `data` (skills, queries) and `retrieve` (k1, b, top_k, configs.<config>.fields) from
params.yaml and writes a run in SkillRet's results-JSON layout.
"""

from __future__ import annotations

import argparse
import sys

from skillret.guard import guarded
from skillret.params import load_yaml


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--config", required=True, help="name under retrieve.configs")
    parser.add_argument("--output", required=True, help="run file to write (results JSON)")
    args = parser.parse_args(argv)

    def work():
        from skillret.baselines import bm25

        params = load_yaml(args.params)
        data, settings = params["data"], params["retrieve"]
        results = bm25.retrieve(bm25.read_jsonl(data["skills"]), bm25.read_jsonl(data["queries"]),
                                fields=settings["configs"][args.config]["fields"],
                                k1=settings["k1"], b=settings["b"], top_k=settings["top_k"])
        bm25.write_results(args.output, results, split=data.get("split", "test"))

    return guarded(work, prog="retrieve_bm25")


if __name__ == "__main__":
    sys.exit(main())
