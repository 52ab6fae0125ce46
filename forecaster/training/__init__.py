"""Training and using forecasters.

`module` (the LightningModule), `trainer` (the one Trainer factory), `workflows` (train / evaluate behind
the CLI) and `prediction` (forecast tables and plots from a bundle, without Lightning). Import the submodule
you need: this package imports nothing itself, so `forecaster predict` stays light.
"""
