"""Long Range Arena task data: ListOps and Pathfinder generators, release-file readers, tokenizers, training.

Submodules are imported where needed (`forecaster.lra.listops`, `.pathfinder`, `.readers`, `.tokenizers`,
`.tasks`, `.training`); only `training` pulls in Lightning.
"""
