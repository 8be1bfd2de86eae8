"""Example retrievers for the sample pipeline (replace them with your own)."""
