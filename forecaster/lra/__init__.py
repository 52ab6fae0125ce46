"""Long Range Arena task data: ListOps and Pathfinder generators, release-file readers, tokenizers, training
settings per task (presets), training, and the task x mixer benchmark.

Submodules are imported where needed (`forecaster.lra.listops`, `.pathfinder`, `.readers`, `.tokenizers`,
`.tasks`, `.presets`, `.training`, `.benchmark`); only `training` and `benchmark` pull in Lightning.
"""
