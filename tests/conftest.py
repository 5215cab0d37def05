import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tiny import tiny_lm  # noqa: E402

from icr_app.core.datafetch import fetch_command  # noqa: E402
from icr_app.core.taskspecs import data_root  # noqa: E402


def pytest_configure(config):
    """Under pytest-xdist (the quick tier's `-n auto`) each worker takes its share of the cores: torch's threads
    in every worker on every core would only contend, and one tiny model gains nothing from a second thread."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workers)))


@pytest.hookimpl(tryfirst=True)  # before the fixtures are set up
def pytest_runtest_setup(item):
    """A test marked `needs_data(NAME)` runs only when $ICL_LAB_DATA/NAME is there; one left out is listed at the
    end of the run with the command that brings its data (its report carries the name, so the summary is right
    when pytest-xdist ran the test in another process)."""
    for marker in item.iter_markers("needs_data"):
        name = marker.args[0]
        if not (data_root() / name).is_dir():
            item.user_properties.append(("needs_data", name))
            pytest.skip(f"needs {data_root() / name}: run `{fetch_command(name)}`")


def pytest_terminal_summary(terminalreporter):
    needs: dict[str, list[str]] = {}  # dataset -> the tests left out because $ICL_LAB_DATA lacks it
    for report in terminalreporter.stats.get("skipped", []):
        for key, name in getattr(report, "user_properties", ()):
            if key == "needs_data":
                needs.setdefault(name, []).append(report.nodeid)
    if not needs:
        return
    terminalreporter.section("tests that need data", sep="=", yellow=True, bold=True)
    for name, tests in needs.items():
        terminalreporter.line(f"{len(tests)} test(s) did not run: they read {data_root() / name}, which is missing. "
                              f"Bring it with `{fetch_command(name)}` (ICL_LAB_DATA picks the folder):", yellow=True)
        for nodeid in tests:
            terminalreporter.line(f"  {nodeid}")


def no_browser(fig, *args, **kwargs):
    raise RuntimeError("the quick tier starts no browser")


@pytest.fixture(autouse=True)
def browser_only_in_the_full_run(request, monkeypatch):
    """kaleido exports a figure's PNG by starting Chromium, seconds for each suite a test runs: outside the slow
    tier (the quick tier starts no browser) the export fails as on a machine without one, and the suite writes its
    figures as HTML and says why. The PNGs themselves are checked by the slow `test_suite` tests."""
    if request.node.get_closest_marker("slow") is None:
        monkeypatch.setattr("plotly.graph_objects.Figure.write_image", no_browser)


@pytest.fixture(scope="session")
def lm():
    """One tiny model for the whole session; tests must leave it as they found it."""
    return tiny_lm()


@pytest.fixture(scope="session")
def sharp_lm():
    """A tiny model whose attention matters: with random q/k weights this small, attention is almost uniform
    and whatever a method changes at one position barely reaches the others."""
    import torch

    lm = tiny_lm(seed=1)
    with torch.no_grad():
        for layer in lm.layers:
            layer.self_attn.q_proj.weight.mul_(8.0)
            layer.self_attn.k_proj.weight.mul_(8.0)
        lm.model.get_input_embeddings().weight.mul_(3.0)
    return lm


@pytest.fixture(scope="session")
def tiny_checkpoint(lm, tmp_path_factory) -> str:
    """The tiny model saved as a local checkpoint folder, for the CLI (which loads models by name or path)."""
    path = tmp_path_factory.mktemp("ckpt") / "tiny"
    lm.model.save_pretrained(path)
    lm.tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def real_lm():
    """The real default model (slow tests only)."""
    from icr_app.core.models import load_model

    return load_model()


@pytest.fixture
def fv_data(request) -> Path:
    """The Function Vectors task files, $ICL_LAB_DATA/fv; a test that reads them is marked `needs_data("fv")`."""
    assert any(m.args == ("fv",) for m in request.node.iter_markers("needs_data")), 'mark it needs_data("fv")'
    return data_root() / "fv"


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, driven by Playwright, for one test module (tests/browser.py has the helpers)."""
    from browser import ARGS, CHROMIUM

    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
