"""I2CL (Li et al., 2024): context vectors from single demonstrations, mixed into every attention and MLP
output of the query by calibrated per-layer coefficients.

`method` builds and runs it (context vectors, injection, calibration), `artefact` is a calibrated one and its
file, `figures` draws its coefficients and sums it up for the app's tab (`SPEC.view`).
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodView
from icr_app.methods.i2cl.method import PAPER, I2CLConfig, I2CLMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    I2CLMethod, title="I2CL (context vectors)", config=I2CLConfig, build=build, kind="implicit", neutral=neutral,
    presets={"paper": PAPER},
    description="demonstrations' mean attention and MLP outputs mixed into every query position by calibrated "
                "per-layer coefficients",
    view=MethodView("i2cl", "icr_app.methods.i2cl.figures:coefficient_figure", "icr_app.methods.i2cl.figures:summary"),
    strings=folder_strings(__file__),
)
