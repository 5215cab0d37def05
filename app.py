"""Launch ICL Lab for a Hugging Face Space: `python app.py`. The Space's variables are read here, at the edge:
ICL_LAB_MODEL (the model every visitor starts with, default smollm2-135m), ICL_LAB_MODELS (comma-separated: what the
picker offers), ICL_LAB_MAX_MODELS and ICL_LAB_MODELS_MEMORY (GiB: how many models stay loaded), and how models
load from the ICL_LAB_* variables of docs/cli.md's model loading, e.g. ICL_LAB_QUANTIZATION=8bit."""

import os

from icr_app.app import launch
from icr_app.app.pool import Budget
from icr_app.core.loading import LoadOptions


def settings(environ: dict[str, str]) -> dict:
    """`launch`'s model settings from the Space's variables (docs/app.md)."""
    models = [m.strip() for m in environ.get("ICL_LAB_MODELS", "").split(",") if m.strip()] or None
    max_models, gib = environ.get("ICL_LAB_MAX_MODELS"), environ.get("ICL_LAB_MODELS_MEMORY")
    budget = Budget(int(max_models) if max_models else None, int(float(gib) * 2**30) if gib else None)
    first = environ.get("ICL_LAB_MODEL") or (models[0] if models else None)
    return {"model": first, "options": LoadOptions.from_env(environ), "models": models, "budget": budget}


if __name__ == "__main__":
    launch(**settings(dict(os.environ)))
