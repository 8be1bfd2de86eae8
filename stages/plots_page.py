"""Stage plots_page: the page that `dvc plots show` and `dvc plots diff` fill (plots.html_template
in .dvc/config), Vega, Vega-Lite and vega-embed inlined from the installed vl-convert-python, so
that their HTML draws the charts with no network. Git-ignored: made from the installed package
(its bundle kept in ~/.cache/skillret-eval, one file per version: skillret.render.plots).

    python -m stages.plots_page --output plots/offline.html
"""

import argparse

from skillret.cli.guard import finish, guarded
from skillret.render.plots import write_html_template

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--output", required=True, help="the HTML page template")
    args = parser.parse_args()
    finish(guarded(lambda: write_html_template(args.output), prog="plots_page"))
