"""Launch ICL Lab for a Hugging Face Space: `python app.py` (model from $ICL_LAB_MODEL, default smollm2-135m)."""

from icr_app.app import launch

if __name__ == "__main__":
    launch()
