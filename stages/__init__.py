"""The pipeline's stages, run from the project root as `python -m stages.<name>` (see dvc.yaml)."""
