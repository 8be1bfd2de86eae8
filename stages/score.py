"""Stage score@<run>: validate one registered run against the canonical qrels, then score it.

    python stages/score.py --run-name NAME --qrels outputs/qrels.tsv --normalized ... (outputs)

Reads `runs.<NAME>` and `run_options.<NAME>` (the file, and how to read it), `validate.strict`
and `eval` from params.yaml. Writes the canonical run, the validation report and its counts, the
metrics, per-query values, plot data and the metric contract, all computed before any is
replaced: a failing run exits 2 with one line and leaves every previous output as it was.
"""

from __future__ import annotations

import os
import sys

# Import the skillret of the tree this script is in, whatever is installed (editable, regular,
# none): the workspace, a `dvc exp` temporary or queued copy, a git worktree.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

from skillret.cli.guard import guarded  # noqa: E402

OUTPUTS = ("normalized", "report", "counts", "metrics", "per_query", "plots", "contract")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--run-name", required=True, help="a name under runs: in params.yaml")
    parser.add_argument("--run-file", metavar="PATH",
                        help="score this file under --run-name instead (a fused run: fuse.<name>)")
    parser.add_argument("--qrels", required=True, help="canonical qrels (TSV)")
    for name in OUTPUTS:
        parser.add_argument(f"--{name.replace('_', '-')}", required=True, metavar="PATH")
    args = parser.parse_args(argv)

    def work():
        from skillret.analysis.breakdown import plan_needed
        from skillret.pipeline.params import (EvalParams, RunEntry, check_name, load_yaml,
                                              run_entry, validate_section)
        from skillret.pipeline.steps import evaluate_registered_run
        from skillret.render.tables import scores_table

        params = load_yaml(args.params)  # every section checked before any work
        evaluation = EvalParams.from_mapping(params.get("eval"), args.params)
        strict = validate_section(params.get("validate"), args.params)["strict"]
        data = params.get("data") or {}
        facets = plan_needed(evaluation.breakdown, data.get("queries"), data.get("skills"))
        entry = (RunEntry(check_name(args.run_name), args.run_file) if args.run_file
                 else run_entry(params, args.run_name, args.params))
        report, scores = evaluate_registered_run(
            args.qrels, entry, outputs={name: getattr(args, name) for name in OUTPUTS},
            eval_params=evaluation, strict=strict, facets=facets)
        for warning in report["warnings"]:
            print(f"validate: warning: {warning}", file=sys.stderr)
        print(f"{entry.name}: {entry.path}")
        print(scores_table(scores))

    return guarded(work, prog=f"score@{args.run_name}")


if __name__ == "__main__":
    sys.exit(main())
