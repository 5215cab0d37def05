"""Launch ICL Lab for a Hugging Face Space: `python app.py` (model from $ICL_LAB_MODEL, default smollm2-135m; how
it loads from the ICL_LAB_* variables of docs/cli.md's model loading, e.g. ICL_LAB_QUANTIZATION=8bit)."""

from icr_app.app import launch
from icr_app.core.loading import LoadOptions

if __name__ == "__main__":
    launch(options=LoadOptions.from_env())
