"""The DVC pipeline's side of the library: params.yaml, registering runs, each stage's step."""
