"""Rendering of computed results: terminal tables, Markdown, plots. Internal."""
