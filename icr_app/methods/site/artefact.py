"""A built SITE task as one artefact file (`core.artefacts`): tensors `t` and `theta`, `SiteMeta` as JSON."""

from __future__ import annotations

from pathlib import Path

from icr_app.core.artefacts import ArtefactError, load_artefact, save_artefact
from icr_app.core.models import LoadedModel
from icr_app.methods.site.method import SiteMeta, SiteMethod, SiteTask

KIND = "site-task"


def save_site(site: SiteTask, path: str | Path) -> Path:
    return save_artefact(path, KIND, {"t": site.t.float(), "theta": site.theta.float()}, site.meta.to_json(),
                         site.fingerprint)


def load_site(path: str | Path, lm: LoadedModel | None = None) -> SiteTask:
    """Read and verify a SITE file; with `lm`, also refuse one built for another model (`ArtefactModelError`)."""
    art = load_artefact(path, KIND, None if lm is None else lm.fingerprint)
    name = Path(path).name
    try:
        meta = SiteMeta(**art.meta)
        t, theta = art.tensors["t"], art.tensors["theta"]
    except (KeyError, TypeError) as err:
        raise ArtefactError(f"{name}: incomplete SITE file: {err}") from None
    if theta.ndim != 2 or t.ndim != 3 or t.shape[:2] != theta.shape:
        raise ArtefactError(f"{name}: inconsistent shapes t {tuple(t.shape)} and theta {tuple(theta.shape)}")
    site = SiteTask(t=t, theta=theta, meta=meta, fingerprint=art.fingerprint)
    if lm is not None:
        site.check_model(lm)
    return site


def save_method(method: SiteMethod, path: str | Path) -> Path:
    return save_site(method.site, path)


def load_method(path: str | Path, lm: LoadedModel) -> SiteMethod:
    site = load_site(path, lm)
    method = SiteMethod(lm, site)
    method.build_s = site.meta.build_s
    return method
