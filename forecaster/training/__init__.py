"""Training forecasters with Lightning.

`module` (the LightningModule), `trainer` (the one Trainer factory) and `workflows` (train / evaluate behind
the CLI). Import the submodule you need: this package imports nothing itself, so predicting stays light.
"""
