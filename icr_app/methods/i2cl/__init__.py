"""I2CL (Li et al., 2024): context vectors from single demonstrations, mixed into every attention and MLP
output of the query by calibrated per-layer coefficients.

`method` builds and runs it (context vectors, injection, calibration), `artefact` saves a calibrated one,
`view` draws its coefficients and `panel` is its app tab.
"""

from icr_app.methods.base import MethodSpec
from icr_app.methods.i2cl.artefact import load_method, save_method
from icr_app.methods.i2cl.method import I2CLConfig, build

SPEC = MethodSpec(
    name="i2cl", title="I2CL (context vectors)", config=I2CLConfig, build=build, kind="implicit",
    save=save_method, load=load_method,
    description="demonstrations' mean attention and MLP outputs mixed into every query position by calibrated "
                "per-layer coefficients",
    tab="icr_app.methods.i2cl.panel:build_tab",
)
