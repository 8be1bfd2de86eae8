"""Stage plots_page: the HTML template `dvc plots show` fills, with Vega inlined (no network)."""

from skillret.cli.guard import stage
from skillret.render.plots import write_html_template

if __name__ == "__main__":
    stage(__doc__, lambda args: write_html_template(args.output), "plots_page",
         ("--output", {"required": True, "help": "the HTML page template"}))
