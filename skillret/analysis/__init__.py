"""Analysis over scored runs, computation only: paired significance tests, comparisons of
runs, breakdowns by query facets, and fusion of runs. Nothing here prints or parses arguments.
Internal; the public API is what `skillret/__init__.py` exports.
"""
