"""What a method's or an analysis' tab may use of the app: the page, the shared context, event wiring, and the
ready-made tab of a built method. Panels import from here only (an import-linter contract in pyproject.toml), so
the app's internals can change without touching any method's folder."""

from icr_app.app.built_tab import TabBuild, TabFigure, built_method_tab
from icr_app.app.context import JOBS, AppContext, clip_query, on
from icr_app.app.exports import json_file
from icr_app.app.i18n import say, t
from icr_app.app.messages import translated_error
from icr_app.app.page import Page

__all__ = ["JOBS", "AppContext", "Page", "TabBuild", "TabFigure", "built_method_tab", "clip_query",
           "json_file", "on", "say", "t", "translated_error"]
