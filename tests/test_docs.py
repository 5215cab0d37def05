"""The project's documentation lives in the repository: a page per registered method and analysis, and no
docstring points at a file that a clone does not have."""

import re
from pathlib import Path

from icr_app.analyses import REGISTRY as ANALYSES
from icr_app.methods import REGISTRY as METHODS

ROOT = Path(__file__).resolve().parents[1]


def test_every_method_and_analysis_has_its_page():
    pages = [ROOT / "docs" / "methods" / f"{name}.md" for name in METHODS]
    pages += [ROOT / "docs" / "analyses" / f"{name}.md" for name in ANALYSES]
    missing = [str(p.relative_to(ROOT)) for p in pages if not p.is_file()]
    assert not missing, missing


def test_docstrings_point_at_pages_that_exist():
    cited = {m for path in (ROOT / "icr_app").rglob("*.py") for m in re.findall(r"docs/[\w/-]+\.md", path.read_text())}
    assert cited, "no docstring points at docs/"
    assert not [c for c in cited if not (ROOT / c).is_file()]
    assert not [p for p in (ROOT / "icr_app").rglob("*.py") if "DESIGN.md" in p.read_text()]
