"""Stage plots_page: the HTML template `dvc plots show` fills, with Vega inlined (no network)."""

from skillret.cli.stage import main
from skillret.render.plots import write_html_template

if __name__ == "__main__":
    main(__doc__, lambda args: write_html_template(args.output), "plots_page",
         ("--output", {"required": True, "help": "the HTML page template"}))
