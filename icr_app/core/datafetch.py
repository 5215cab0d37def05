"""The datasets the tests and the benchmarks read, brought into `$ICL_LAB_DATA` from their public sources.

`fv`: the ten Function Vectors task files the project uses and their licence, from the authors' repository at a
pinned commit, each checked against its SHA-256 digest (`$ICL_LAB_DATA/fv/<task>.json`). `icr-paper` and
`i2cl-paper` (or one of their sets by name): the seed papers' datasets, rebuilt by `core.paper_sources` from the
public repositories pinned there (`$ICL_LAB_DATA/<set>/`). Files are downloaded raw by pinned-commit URL, or read
from a local copy (`source`) with the same checks.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import quote
from urllib.request import urlopen

from icr_app.core.paper_sources import SOURCES, Read, SourceFiles, build, open_source
from icr_app.core.progress import Progress, no_progress
from icr_app.core.taskspecs import data_root, group_names, load_group

RAW_URL = "https://raw.githubusercontent.com"  # GitHub's raw files: RAW_URL/owner/name/commit/path
FV = "fv"
FV_REPO = "ericwtodd/function_vectors"
FV_COMMIT = "fb9eac7b6dc707ea1475a717379916007fe448d5"
_TASKS = "dataset_files/abstractive"
# file -> (its path in FV_REPO, its SHA-256 at FV_COMMIT); no other task file of that repository is fetched
FV_FILES = {
    "LICENSE": ("LICENSE", "5d488ccef808890d04aa42a55f3f5c2b1a1af7156cf28d97ef932796f66e7987"),
    "ag_news.json": (f"{_TASKS}/ag_news.json", "2201d0fbdab6b5b37b15ecd20da590f79b156e91f6c8c620920714bad8603115"),
    "antonym.json": (f"{_TASKS}/antonym.json", "ba66e8e399944b557251b11a37b11f9ba7a50f0a57286f7021a8a7b26b469e8d"),
    "capitalize.json": (f"{_TASKS}/capitalize.json",
                        "9aad849c761de2f0c6195eb73496a0cfe7e600751b0d61a3c82709b1a3dcd53f"),
    "country-capital.json": (f"{_TASKS}/country-capital.json",
                             "5748cbfb789c2d671f8a88bf8eaa8a800ead77299e34e1d0cafae11b0409782b"),
    "national_parks.json": (f"{_TASKS}/national_parks.json",
                            "ffe2018634ffac660e07cef0f330a52991f18f06ffb0af1abd46a2189cf2ed14"),
    "person-instrument.json": (f"{_TASKS}/person-instrument.json",
                               "4fff080310e723dc85cca5c10c0c11eebf30df230e8fc102448a4adb0f5da49c"),
    "person-occupation.json": (f"{_TASKS}/person-occupation.json",
                               "2c2fac0d4ba5a0aec033005c92ea170c6254f1d30a9b063c9ae5be0ff5d093d7"),
    "present-past.json": (f"{_TASKS}/present-past.json",
                          "bd6f7d484a967646aa5854740c70803568225f47a5630e1555c39e827ba9c78b"),
    "sentiment.json": (f"{_TASKS}/sentiment.json", "e63f927bf5920c3acf01dcbdc628bc07118731a77916de4bf0f6e3e443f75413"),
    "singular-plural.json": (f"{_TASKS}/singular-plural.json",
                             "beac51d02481a63115f0f7879e0dfc8d70244aeaea4d0a8d5193a5b2dfc07b9b"),
}  # fmt: skip
TIMEOUT = 60  # seconds a download may stall before it is an error


class DataError(ValueError):
    """A dataset that cannot be brought: an unknown name, a missing or altered file, a failed download."""


def fetch_command(name: str) -> str:
    return f"icl-lab data fetch {name}"


def dataset_names() -> list[str]:
    """What `fetch` takes: `fv`, the paper groups and each of their sets."""
    return [FV, *group_names(), *SOURCES]


def fv_dir() -> Path:
    """Where the function-vector task files live: $ICL_LAB_DATA/fv (present or not)."""
    return data_root() / FV


def require_fv() -> Path:
    """$ICL_LAB_DATA/fv, or a `DataError` saying how to bring it when a file is missing."""
    folder = fv_dir()
    missing = [name for name in FV_FILES if not (folder / name).is_file()]
    if missing:
        raise DataError(f"{folder}: the function-vector task files are missing ({', '.join(missing)}); "
                        f"run `{fetch_command(FV)}` (it writes to $ICL_LAB_DATA/fv)")
    return folder


def github_reader(repo: str, commit: str, base_url: str = RAW_URL) -> Read:
    """A reader of one repository's raw files at `commit`: base_url/owner/name/commit/path."""

    def read(path: str) -> bytes:
        url = f"{base_url.rstrip('/')}/{repo}/{commit}/{quote(path)}"
        try:
            with urlopen(url, timeout=TIMEOUT) as response:
                return response.read()
        except HTTPError as err:
            if err.code == 404:
                raise FileNotFoundError(f"{url}: not found (HTTP 404)") from None
            raise DataError(f"{url}: download failed (HTTP {err.code} {err.reason})") from None
        except OSError as err:  # URLError, a timeout, a reset connection
            raise DataError(f"{url}: download failed ({getattr(err, 'reason', err)})") from None

    return read


def _fv_local_reader(folder: Path) -> Read:
    """The FV files from a local copy: flat (`folder/sentiment.json`) or a clone (`folder/dataset_files/...`)."""
    names = {path: name for name, (path, _) in FV_FILES.items()}

    def read(path: str) -> bytes:
        for candidate in (folder / names[path], folder / path):
            if candidate.is_file():
                return candidate.read_bytes()
        raise FileNotFoundError(f"{folder}: no {names[path]} (nor {path})")

    return read


def _write_whole(path: Path, data: bytes) -> None:
    """Write through a private temporary name so a file is either whole or absent."""
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    part.write_bytes(data)
    os.replace(part, path)


def fetch_fv(dest: Path, source: Path | None = None, base_url: str = RAW_URL,
             progress: Progress = no_progress) -> Path:
    """The ten FV task files and their licence into dest/fv, every one checked before any is written."""
    read = _fv_local_reader(Path(source)) if source else github_reader(FV_REPO, FV_COMMIT, base_url)
    where = str(source) if source else f"{FV_REPO} at {FV_COMMIT[:7]}"
    files = {}
    for name, (path, digest) in progress(FV_FILES.items(), desc=FV, total=len(FV_FILES), unit="file"):
        data = read(path)
        got = hashlib.sha256(data).hexdigest()
        if got != digest:
            raise DataError(f"{name} from {where}: SHA-256 {got} is not the pinned file's {digest} (a different "
                            f"version of {path}?); nothing was written")
        files[name] = data
    out = Path(dest) / FV
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        _write_whole(out / name, data)
    return out


def paper_sets(name: str) -> list[str]:
    """The sets a paper group holds, or [name] for one set."""
    return list(load_group(name).members) if name in group_names() else [name]


def _readers(names: Iterable[str], source: Path | None, base_url: str) -> dict[str, SourceFiles]:
    """One reader per set; with a local `source`, a `DataError` naming every repository it lacks."""
    if source is None:
        return {n: SourceFiles({r: github_reader(r, c, base_url) for r, c in SOURCES[n].repos().items()})
                for n in names}  # fmt: skip
    readers = {n: open_source(Path(source), SOURCES[n]) for n in names}
    absent = sorted({r for n in names for r in SOURCES[n].repos() if not (Path(source) / r.replace("/", "+")).is_dir()})
    if absent:
        for read in readers.values():
            if read is not None:
                read.close()
        raise DataError(f"{source} holds no copy of {', '.join(absent)}: give each as {source}/owner+name (a "
                        "clone, or its files at their paths in the repository)")
    return {n: read for n, read in readers.items() if read is not None}  # all of them, none being absent


def fetch_papers(name: str, dest: Path, source: Path | None = None, base_url: str = RAW_URL,
                 progress: Progress = no_progress) -> list[dict]:
    """Build a paper group's sets (or one set) into dest/<set>/; returns each set's SOURCE.json record."""
    names = paper_sets(name)
    readers = _readers(names, source, base_url)
    try:
        return [build(n, SOURCES[n], readers[n], Path(dest)) for n in progress(names, desc=name, unit="set")]
    finally:
        for read in readers.values():
            read.close()


def fetch(name: str, dest: Path | None = None, source: Path | None = None, base_url: str = RAW_URL,
          progress: Progress = no_progress) -> Path:
    """Bring dataset `name` (see `dataset_names`) into `dest` (default $ICL_LAB_DATA); returns `dest`."""
    if name not in dataset_names():
        raise DataError(f"no dataset '{name}' to fetch (datasets: {', '.join(dataset_names())})")
    if source is not None and not Path(source).is_dir():
        raise DataError(f"{source}: no such folder")
    dest = Path(dest) if dest is not None else data_root()
    if name == FV:
        fetch_fv(dest, source, base_url, progress)
    else:
        fetch_papers(name, dest, source, base_url, progress)
    return dest
