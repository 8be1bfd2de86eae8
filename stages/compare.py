"""Stage compare: paired significance tests of every registered and fused run against
`compare.baseline`, from the per-query tables the score stages wrote; then the headline."""

from skillret.cli.guard import stage
from skillret.pipeline import project_stages

if __name__ == "__main__":
    stage(__doc__, lambda args: project_stages.compare(), "compare")
