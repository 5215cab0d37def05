"""`icl-lab data fetch`: the FV task files downloaded by pinned-commit URL (from a server on 127.0.0.1 laid out as
GitHub's raw files) or copied with `--from`, each checked against its pinned digest; a paper set downloaded the
same way; and a test that needs data it lacks is listed at the end of the run with the command that brings it."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from icr_app.cli import main as cli
from icr_app.core import datafetch
from icr_app.core.datafetch import FV_COMMIT, FV_FILES, FV_REPO, DataError, fetch, require_fv

ROOT = Path(__file__).resolve().parents[1]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test's output is not the server's log
        pass


@pytest.fixture
def raw_server(tmp_path):
    """A local stand-in for GitHub's raw files: (its base URL, the folder it serves as owner/name/commit/path)."""
    root = tmp_path / "raw"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", root
    server.shutdown()
    server.server_close()


def lay_out_fv(fv: Path, root: Path) -> Path:
    """The ten task files and the licence at their paths in the authors' repository, under root."""
    for name, (path, _) in FV_FILES.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fv / name, target)
    return root


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


PINNED = {name: digest for name, (_, digest) in FV_FILES.items()}


@pytest.mark.needs_data("fv")
def test_fv_downloads_by_pinned_commit_url_and_refuses_an_altered_file(fv_data, raw_server, tmp_path):
    base, root = raw_server
    repo = lay_out_fv(fv_data, root / FV_REPO / FV_COMMIT)
    assert cli(["data", "fetch", "fv", "--dest", str(tmp_path / "a"), "--base-url", base]) == 0
    assert digests(tmp_path / "a" / "fv") == PINNED
    (repo / FV_FILES["sentiment.json"][0]).write_bytes(b"[]")
    with pytest.raises(DataError, match=r"sentiment.json from ericwtodd/function_vectors at fb9eac7: SHA-256 "
                                         r"[0-9a-f]{64} is not the pinned file's e63f927b"):
        fetch("fv", tmp_path / "b", base_url=base)
    assert not (tmp_path / "b").exists()  # nothing is written unless every file is the pinned one
    (repo / "LICENSE").unlink()
    with pytest.raises(FileNotFoundError, match=rf"{base}/{FV_REPO}/{FV_COMMIT}/LICENSE: not found"):
        fetch("fv", tmp_path / "b", base_url=base)


def test_a_download_that_cannot_connect_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match=r"http://127.0.0.1:1/ericwtodd/function_vectors/fb9eac7\w+/LICENSE: "
                                        r"download failed"):
        fetch("fv", tmp_path, base_url="http://127.0.0.1:1")


@pytest.mark.needs_data("fv")
def test_fv_from_a_local_copy_flat_or_a_clone_with_the_same_checks(fv_data, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ICL_LAB_DATA", str(tmp_path / "data"))
    assert cli(["data", "fetch", "fv", "--from", str(fv_data)]) == 0  # into $ICL_LAB_DATA
    assert digests(require_fv()) == PINNED and require_fv() == tmp_path / "data" / "fv"
    clone = lay_out_fv(fv_data, tmp_path / "function_vectors")
    assert cli(["data", "fetch", "fv", "--from", str(clone), "--dest", str(tmp_path / "c")]) == 0
    assert digests(tmp_path / "c" / "fv") == PINNED
    (clone / FV_FILES["antonym.json"][0]).write_text("[]")
    assert cli(["data", "fetch", "fv", "--from", str(clone), "--dest", str(tmp_path / "d")]) == 2
    assert "antonym.json from" in capsys.readouterr().err and not (tmp_path / "d").exists()


def test_missing_fv_names_the_command_and_bad_names_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ICL_LAB_DATA", str(tmp_path))
    with pytest.raises(DataError, match=r"fv: the function-vector task files are missing \(LICENSE, ag_news.json"
                                        r".*run `icl-lab data fetch fv`"):
        require_fv()
    with pytest.raises(DataError, match=r"no dataset 'fvv' to fetch \(datasets: fv, i2cl-paper, icr-paper, sst2"):
        fetch("fvv")
    with pytest.raises(SystemExit):
        cli(["data", "fetch", "fvv"])
    assert "invalid choice: 'fvv'" in capsys.readouterr().err
    assert cli(["data", "fetch", "fv", "--from", str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such folder" in capsys.readouterr().err


def test_a_paper_set_downloads_from_its_pinned_repositories(raw_server, tmp_path):
    base, root = raw_server
    repo = root / "yasumasaonoe/creak" / datafetch.SOURCES["creak"].commit / "data" / "creak"
    repo.mkdir(parents=True)
    rows = [{"ex_id": f"train_{i}", "sentence": f"Claim {i}.", "label": "true"} for i in range(3)]
    (repo / "train.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (repo / "dev.json").write_text(json.dumps(rows[0]) + "\n")
    assert cli(["data", "fetch", "creak", "--dest", str(tmp_path / "out"), "--base-url", base]) == 0
    record = json.loads((tmp_path / "out" / "creak" / "SOURCE.json").read_text())
    assert record["rows"] == {"train": 3, "validation": 1}
    assert record["repos"] == {"yasumasaonoe/creak": datafetch.SOURCES["creak"].commit}
    with pytest.raises(FileNotFoundError, match=r"yasumasaonoe/creak/\w+/data/creak/train.json: not found"):
        fetch("creak", tmp_path / "out", base_url=base + "/elsewhere")


@pytest.mark.slow  # a pytest run in another process
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_test_lacking_its_data_is_listed_with_the_fetch_command(tmp_path, workers):
    """Also when pytest-xdist runs the test in a worker process, as the quick tier does."""
    env = {**os.environ, "ICL_LAB_DATA": str(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers,
                          "tests/test_tasks.py::test_fv_file_loads"], cwd=ROOT, env=env, capture_output=True,
                         text=True)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    summary = run.stdout.split("tests that need data", 1)[1]
    assert f"they read {tmp_path / 'fv'}, which is missing. Bring it with `icl-lab data fetch fv`" in summary
    assert "tests/test_tasks.py::test_fv_file_loads" in summary
