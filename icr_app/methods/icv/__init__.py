"""ICV (Liu et al., 2024): the first principal direction of the demonstrations' latent shifts per layer, added
at every layer and position with a norm-preserving rescale, its strength chosen on held-out examples.

`method` builds and runs it (latent shifts, directions, injection, λ sweep), `artefact` saves a built one,
`view` draws the sweep and `panel` is its app tab.
"""

from icr_app.methods.base import MethodSpec
from icr_app.methods.icv.artefact import load_method, save_method
from icr_app.methods.icv.method import ICVConfig, build

SPEC = MethodSpec(
    name="icv", title="ICV (in-context vector)", config=ICVConfig, build=build, kind="implicit",
    save=save_method, load=load_method,
    description="the demonstrations' principal latent shift per layer, added at every position, norm kept",
    tab="icr_app.methods.icv.panel:build_tab",
)
