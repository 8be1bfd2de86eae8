"""Stage normalize_qrels: judgments in any supported format -> canonical TSV, plus statistics."""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import project_stages

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(project_stages.normalize_qrels_stage, prog="normalize_qrels"))
