"""Rendering of results for people: terminal tables, Markdown and plot data. Takes computed
results, never computes them. Internal.
"""
