"""LoRA: explicit fine-tuning through peft, the weight-update reference the implicit ICL methods are compared with.

`method` trains the adapter in a private copy of the model and answers through it, `train` is the training
loop, `artefact` is a trained adapter and its file, `figures` draws its training curve and parameter count, `panel`
is its app tab.
"""

from icr_app.methods.lora.method import LoraConfig, LoraMethod, build, neutral
from icr_app.methods.state import stateful_spec

SPEC = stateful_spec(
    LoraMethod, title="LoRA (explicit fine-tuning)", config=LoraConfig, build=build, kind="fine-tuning",
    neutral=neutral,
    description="explicit fine-tuning, not in-context learning: low-rank weight updates trained on the examples "
                "(peft), merged into a private copy of the model",
    tab="icr_app.methods.lora.panel:build_tab",
)
