"""Stage validate@<run>: check one run against the canonical qrels; write the canonical run,
the validation report and its counts.

Reads `validate.strict`, and the `eval` profiles (whose largest cutoff is the depth a ranking
should reach) from params.yaml.
"""

from __future__ import annotations

import argparse
import sys

from skillret.guard import guarded
from skillret.params import eval_params, validate_params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--qrels", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--normalized", required=True, help="canonical run (Parquet)")
    parser.add_argument("--report", required=True, help="full report (JSON)")
    parser.add_argument("--metrics", required=True, help="report counts (JSON metrics)")
    args = parser.parse_args(argv)

    def work():
        from skillret.pipeline import validate_run
        from skillret.profiles import resolve_profiles

        params = eval_params(args.params)
        depth = max(p.depth for p in resolve_profiles(
            params.profiles, define=params.define, relevance_level=params.relevance_level))
        report = validate_run(args.qrels, args.run, normalized=args.normalized,
                              report=args.report, metrics=args.metrics, depth=depth,
                              strict=validate_params(args.params)["strict"])
        for warning in report["warnings"]:
            print(f"validate: warning: {warning}", file=sys.stderr)

    return guarded(work, prog="validate")


if __name__ == "__main__":
    sys.exit(main())
