"""`forecaster tune`: search spaces per model (`space`) and the Ray Tune search that retrains the best
settings as a bundle (`search`)."""
