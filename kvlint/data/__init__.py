"""Package data: the accelerator catalogue, the model catalogue (models/) and the .kvlint.yaml schema."""
