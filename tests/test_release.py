"""What a release is made of: the version written once, CHANGELOG.md's newest section for it (with the artefact
format it writes), and requirements files that all exist wherever they are named."""

import re
from pathlib import Path

import tomllib
from setuptools.config.pyprojecttoml import read_configuration

import icr_app
from icr_app.core import artefacts

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS_NAME = re.compile(r"\b((?:requirements|constraints)[\w.-]*\.(?:txt|lock))\b")


def test_the_version_is_written_once():
    """pyproject reads the package's `__version__` (statically: building reads no torch), so the two cannot differ."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert read_configuration(ROOT / "pyproject.toml")["project"]["version"] == icr_app.__version__


def newest_release() -> tuple[str, str]:
    """CHANGELOG's newest released section: its version and its text (an [Unreleased] section above it is skipped)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    released = [s for s in sections if re.match(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}\n", s)]
    assert released, "CHANGELOG.md has no section '## [X.Y.Z] - YYYY-MM-DD'"
    return released[0][1:released[0].index("]")], released[0]


def test_the_changelog_describes_this_version_and_its_format():
    version, section = newest_release()
    assert version == icr_app.__version__
    assert f"`{artefacts.FORMAT}`" in section, "the newest section does not name the artefact format it writes"


def named_requirements_files() -> dict[str, set[str]]:
    """Every requirements or constraints file a file of the repository names, by the file naming it: `-r`/`-c`
    lines and comments of the requirements files, pyproject's `file = [...]`, README, CI and the docs."""
    sources = [*ROOT.glob("requirements*"), *ROOT.glob("constraints*"), ROOT / "pyproject.toml", ROOT / "README.md",
               ROOT / ".ci" / "run", ROOT / "app.py", *(ROOT / "docs").glob("*.md")]
    return {str(path.relative_to(ROOT)): set(REQUIREMENTS_NAME.findall(path.read_text())) for path in sources}


def test_every_named_requirements_file_exists():
    named = named_requirements_files()
    assert "requirements.lock" in named["requirements-dev.txt"]  # the comment saying the lock pins its ranges
    missing = {source: sorted(name for name in names if not (ROOT / name).is_file())
               for source, names in named.items()}
    assert not {source: names for source, names in missing.items() if names}
