"""Stage compare: paired significance tests of every registered and fused run against
`compare.baseline`, from the per-query tables the score stages wrote; then the headline.

Writes metrics/compare.json, reports/compare.md and metrics/headline.json, all only after every
table was read and every test done.
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import project_stages

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(project_stages.compare, prog="compare"))
