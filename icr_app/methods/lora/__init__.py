"""LoRA: explicit fine-tuning through peft, the weight-update reference the implicit ICL methods are compared with.

`method` trains the adapter in a private copy of the model and answers through it, `train` is the training
loop, `artefact` is a trained adapter and its file, `figures` draws its training curve and parameter count
and sums it up for the app's tab (`SPEC.view`).
"""

from icr_app.methods.base import BuildControl, MethodView
from icr_app.methods.lora.method import LoraConfig, LoraMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    LoraMethod, title="LoRA (explicit fine-tuning)", config=LoraConfig, build=build, kind="fine-tuning",
    neutral=neutral,
    description="explicit fine-tuning, not in-context learning: low-rank weight updates trained on the examples "
                "(peft), merged into a private copy of the model",
    view=MethodView("lora", "icr_app.methods.lora.figures:training_curve", "icr_app.methods.lora.figures:summary",
                    second="icr_app.methods.lora.figures:beside_site",
                    build=BuildControl("steps", 0, 400, "lora.steps", "lora.train", "lora.load", "lora.training")),
)
