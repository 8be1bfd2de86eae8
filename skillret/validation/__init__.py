"""Validation of a run against the qrels before it is scored, and its report."""
