"""Stage plots_page: the HTML template `dvc plots show` fills, with Vega inlined (no network)."""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.render.plots import write_html_template

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--output", required=True, help="the HTML page template")
    args = parser.parse_args()
    finish(guarded(lambda: write_html_template(args.output), prog="plots_page"))
