"""The DVC pipeline's side of the library: reading `params.yaml`, registering runs, and the
file-producing steps each stage performs (read, compute, write). The library knows no more of
DVC than this. Internal.
"""
