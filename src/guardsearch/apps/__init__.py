"""Ready solvers built on the search layer: mostly configuration (spaces, prompts, guards)."""
