"""One module per command group of the `forecaster` command line, each a thin layer over the library.

A module gives `HELP` (and optionally `DESCRIPTION`) and `configure(parser)`, which adds its flags and sets
`handler`; flags of settings are derived from their declarations (`forecaster.commands.options`).
"""
