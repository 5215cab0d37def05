"""LoRA: explicit fine-tuning through peft, the weight-update reference the implicit ICL methods are compared with.

`method` trains the adapter in a private copy of the model and answers through it, `train` is the training
loop, `artefact` saves an adapter, `view` draws its training curve and parameter count, `panel` is its app tab.
"""

from icr_app.methods.base import MethodSpec
from icr_app.methods.lora.artefact import load_method, save_method
from icr_app.methods.lora.method import LoraSettings, build

SPEC = MethodSpec(
    name="lora", title="LoRA (explicit fine-tuning)", config=LoraSettings, build=build, kind="fine-tuning",
    save=save_method, load=load_method,
    description="explicit fine-tuning, not in-context learning: low-rank weight updates trained on the examples "
                "(peft), merged into a private copy of the model",
    tab="icr_app.methods.lora.panel:build_tab",
)
