"""Stage plots_page: the page that `dvc plots show` and `dvc plots diff` fill (plots.html_template
in .dvc/config), Vega, Vega-Lite and vega-embed inlined from the installed vl-convert-python, so
that their HTML draws the charts with no network. Git-ignored: made from the installed package
(its bundle kept in ~/.cache/skillret-eval, one file per version: skillret.render.plots).

    python -m stages.plots_page --output plots/offline.html
"""

from skillret.cli import stages

if __name__ == "__main__":
    stages.finish(stages.plots_page(doc=__doc__))
