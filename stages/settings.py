"""Stage settings: what every run is scored with, and which runs there are, checked once.

A bad profile, breakdown, headline, run name or run options entry stops here, in one line,
before any run is scored.
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.pipeline import project_stages

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.partition("\n\n")[0]).parse_args()
    finish(guarded(project_stages.settings, prog="settings"))
