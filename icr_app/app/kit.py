"""What a method's or an analysis' tab may use of the app: the page, the shared context, event wiring, and the
ready-made tab of a built method. Panels import from here only (an import-linter contract in pyproject.toml), so
the app's internals can change without touching any method's folder."""

from icr_app.app.answers import AFTER_ANSWERS, Page
from icr_app.app.built_tab import TabBuild, TabFigure, built_method_tab
from icr_app.app.context import JOBS, AppContext, clip_query, on
from icr_app.app.exports import json_file

__all__ = ["AFTER_ANSWERS", "JOBS", "AppContext", "Page", "TabBuild", "TabFigure", "built_method_tab", "clip_query",
           "json_file", "on"]
