"""LoRA: explicit fine-tuning through peft, the weight-update reference the implicit ICL methods are compared with.

`method` trains the adapter in a private copy of the model and answers through it, `train` is the training
loop, `artefact` is a trained adapter and its file, `peft_folder` the same adapter as a PEFT folder (its export,
read back too), `figures` draws its training curve and parameter count and sums it up for the app's tab
(`SPEC.view`).
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import BuildControl, Export, MethodView
from icr_app.methods.lora.method import LoraConfig, LoraMethod, build, neutral
from icr_app.methods.lora.peft_folder import is_peft_folder, load_peft, write_peft
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    LoraMethod, title="LoRA (explicit fine-tuning)", config=LoraConfig, build=build, kind="fine-tuning",
    neutral=neutral,
    description="explicit fine-tuning, not in-context learning: low-rank weight updates trained on the examples "
                "(peft), merged into a private copy of the model",
    view=MethodView("lora", "icr_app.methods.lora.figures:training_curve", "icr_app.methods.lora.figures:summary",
                    second="icr_app.methods.lora.figures:beside_site",
                    build=BuildControl("steps", 0, 400, "lora.steps", "lora.train", "lora.load", "lora.training")),
    exports={"peft": Export(write_peft, reads=is_peft_folder, load=load_peft)},
    strings=folder_strings(__file__),
)
