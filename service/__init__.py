"""The HTTP service: FastAPI app serving trained forecaster bundles (`service.app.create_app`)."""
