"""Stage settings: what every run is scored with, and which runs there are, checked once.

    python -m stages.settings   # reports/settings.json, reports/runs.json, reports/run_settings/

Reads `eval`, `validate`, `runs`, `run_options`, `fuse` and `data` from params.yaml, and hashes
the canonical qrels and the data files eval.breakdown reads. Every score@<run> depends on
reports/run_settings/<run>.json (its options and the sha256 of reports/settings.json) and its
own run; score_fused@<name> on reports/settings.json; the stages over every run on
reports/runs.json. A bad profile, breakdown, headline, run name or run options entry stops
here, in one line, before any run is scored.
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import project_stages

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(project_stages.settings, prog="settings"))
