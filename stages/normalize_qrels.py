"""Stage normalize_qrels: judgments in any supported format -> canonical TSV, plus statistics."""

from skillret.cli.guard import stage
from skillret.pipeline import project_stages

if __name__ == "__main__":
    stage(__doc__, lambda args: project_stages.normalize_qrels_stage(), "normalize_qrels")
