"""Speed and memory tables (`forecaster bench ...`): `timing` measures, `scaling`, `attention`, `smoother`
and `serve` build one table each, always side by side with the alternative in the same run."""
