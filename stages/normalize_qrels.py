"""Stage normalize_qrels: judgments in any supported format -> canonical TSV, plus statistics."""

from skillret.pipeline import project_stages
from stages import main

if __name__ == "__main__":
    main(__doc__, lambda args: project_stages.normalize_qrels_stage(), "normalize_qrels")
