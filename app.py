"""Launch ICL Lab: `python app.py` (model from $ICL_LAB_MODEL, default smollm2-135m)."""

from icr_app.ui import launch

if __name__ == "__main__":
    launch()
