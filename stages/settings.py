"""Stage settings: what every run is scored with, and which runs there are, checked once."""

from skillret.cli.guard import stage
from skillret.pipeline import project_stages

if __name__ == "__main__":
    stage(__doc__, lambda args: project_stages.settings(), "settings")
