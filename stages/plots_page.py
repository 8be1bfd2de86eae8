"""Stage plots_page: the page that `dvc plots show` and `dvc plots diff` fill (plots.html_template
in .dvc/config), Vega, Vega-Lite and vega-embed inlined from the installed vl-convert-python, so
that their HTML draws the charts with no network. Git-ignored: made from the installed package.
"""

from __future__ import annotations

import os
import sys

# Import the skillret of the tree this script is in, whatever is installed (see stages/score.py).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402

from skillret.cli.guard import guarded  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--output", required=True, help="the HTML page template")
    args = parser.parse_args(argv)

    def work():
        from skillret.render.plots import write_html_template

        write_html_template(args.output)

    return guarded(work, prog="plots_page")


if __name__ == "__main__":
    sys.exit(main())
