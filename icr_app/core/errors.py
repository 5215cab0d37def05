"""The errors a user can act on (a task file that cannot be used, labels the model cannot tell apart, a file made
for another model, a model too large), each named by a code and carrying the details that fill its message.

Every code's English message is written once, here (`MESSAGES`), so `str(err)` and the CLI read it; the page shows
the same error in the visitor's language from its own template for the code (`app/strings.py`, "error.<code>",
with the same placeholders), so rewording a message here never loses its translation.
"""

from __future__ import annotations

import functools
from typing import Any

MESSAGES: dict[str, str] = {
    # a task file or table (core.tasks, and the suite's list of tasks)
    "task.empty": "{file}: no examples found (the file or table is empty)",
    "task.no_records": "{file}: no examples found",
    "task.too_many_rows": "{file}: {n} rows is over the limit of {max}",
    "task.blank_rows": "{file}: {n} row(s) have a blank input or output (rows {rows})",
    "task.too_few": "{file}: at least 2 examples are needed, got {n}",
    "task.one_label": "{file}: every example has the label '{label}'; a classification task needs at least two "
                      "labels (set the task type to 'open' if this is a generation task)",
    "task.no_such_column": "no {role} column '{want}'; the columns are: {columns}",
    "task.no_column": "no {role} column found; name one of {names} (columns are: {columns})",
    "task.not_records": "each record must be an object with an input and an output field",
    "task.too_big": "{file}: {mb:.1f} MB is over the {max} MB limit",
    "task.not_utf8": "{file}: not UTF-8 text (byte {byte}); save the file as UTF-8",
    "task.empty_file": "{file}: the file is empty",
    "task.malformed_table": "{file}: malformed {format}: {err}",
    "task.no_header": "{file}: no header row",
    "task.extra_fields": "{file}: some rows have more fields than the header",
    "task.malformed_json": "{file}: malformed JSON at line {line}: {err}",
    "task.malformed_jsonl": "{file}: malformed JSON on line {line}: {err}",
    "task.not_a_list": '{file}: JSON must be a list of {{"input", "output"}} objects',
    "task.file_type": "{file}: unsupported file type '{ext}'; use .csv, .tsv, .json or .jsonl",
    "task.no_such_file": "{file}: no such file (built-in tasks: {names})",
    "task.no_builtin": "no built-in task '{name}' (built-in tasks: {names})",
    "task.classification_only": "{file}: the anchors analyses need a classification task (label words)",
    "task.empty_folder": "{folder}: no task files ({suffixes}) in this folder",
    "task.named_twice": "more than one task named {names}: results are kept by task name",
    # a dataset's task spec (core.taskspecs) and its data
    "spec.unknown": "no task spec 'hf:{name}' (specs: {names})",
    "group.unknown": "no task group '{name}' (groups: {names})",
    "spec.bad_yaml": "{file}: not a readable task spec: {err}",
    "spec.bad_field": "task spec {spec}: field '{field}' {why}",
    "spec.no_data": "task spec {spec}: no data: looked in {where}: {err}",
    "spec.no_split": "task spec {spec}: no split '{split}' in {where} (splits there: {splits})",
    "spec.empty_split": "task spec {spec}: split '{split}' is empty",
    "spec.no_column": "task spec {spec}, split '{split}': its {field} needs column {column}, which the data lacks "
                      "(columns: {columns})",
    "spec.label_outside": "task spec {spec}, split '{split}': label value(s) {values} are not in the verbalizer "
                          "({labels})",
    # labels the model cannot score
    "label.no_tokens": "label '{label}' tokenises to nothing",
    "label.same_tokens": "labels '{a}' and '{b}' tokenise to the same tokens, so the model cannot tell them apart; "
                         "rename one of them",
    "label.site_first_token": "SITE's first-token objective cannot tell apart labels that share their first token; "
                              "use the whole-answer objective (--site-objective answer) or rename a label",
    "label.anchors_first_token": "the anchors analyses score the first answer token, and two labels share it; "
                                 "rename the labels so that their first tokens differ",
    "label.unmatched": "a demonstration's label matched no token; is the label empty?",
    # the prompt format (core.prompts)
    "prompt.no_chat_template": "model {model} has no chat template, so it cannot be prompted in the chat format; "
                               "use --prompt-format plain (prompt_format=\"plain\")",
    "prompt.other_format": "this {what} was made on {built} prompts, and this run asks for {asked} prompts; run it "
                           "with --prompt-format {built}",
    # an artefact file (core.artefacts, a method's built state)
    "artefact.unreadable": "{file}: not a readable ICL Lab file: {err}",
    "artefact.corrupted": "{file}: not a readable ICL Lab file (corrupted or truncated?): {err}",
    "artefact.not_ours": "{file}: not an ICL Lab artefact",
    "artefact.old_format": "{file}: not an ICL Lab artefact (format {found!r}, expected {expected!r}); files from "
                           "older versions must be built again",
    "artefact.no_such_file": "{file}: no such file",
    "artefact.other_kind": "{file}: a {found!r} file, not a {kind!r} file",
    "artefact.unknown_kind": "{file}: a {kind!r} file, which no registered method reads",
    "artefact.checksum": "{file}: the tensor data does not match its checksum (the file is corrupted)",
    "artefact.bad_meta": "{file}: unreadable metadata: {err}",
    "artefact.not_json": "{file} holds {constant}, which is not valid JSON; write it again (null, not NaN)",
    "artefact.other_model": "{file} was made for model {found}, not the loaded {loaded}; build it again for this "
                            "model",
    "artefact.inconsistent": "{file}: incomplete or inconsistent {what} file: {err}",
    "artefact.built_for_other_model": "this {what} was built for model {found}{found_shapes}, but the loaded model "
                                      "is {loaded}{loaded_shapes}; rebuild it for this model",
    "artefact.trained_for_other_model": "this {what} was trained on model {found}{found_shapes}, but the loaded "
                                        "model is {loaded}{loaded_shapes}; train it again for this model",
    "lora.tensors_mismatch": "the adapter's tensors do not fit this model's layers ({n} tensors, {expected} "
                             "expected)",
    "lora.config_fields": "unusable LoRA config: {fields} missing or mistyped",
    "lora.config": "unusable LoRA config: {err}",
    "lora.config_settings": "LoRA config with settings ICL Lab does not use: {settings}",
    # a PEFT adapter folder read as a LoRA (methods.lora.peft_folder)
    "peft.pickle": "{folder}: the adapter's weights are in adapter_model.bin, a pickle, which ICL Lab never loads; "
                   "save them as adapter_model.safetensors (peft's save_pretrained does so by default)",
    "peft.no_weights": "{folder}: no adapter_model.safetensors beside adapter_config.json",
    "peft.bad_config": "{folder}: adapter_config.json is not a readable JSON object: {err}",
    "peft.not_lora": "{folder}: a {peft_type} adapter; ICL Lab reads LoRA adapters only",
    "peft.tensor": "{folder}: tensor {name} is not a LoRA A or B weight (embedding adapters, DoRA magnitudes, "
                   "saved modules and biases cannot be applied)",
    "peft.unpaired": "{folder}: {module} has a lora_A without its lora_B, or the reverse",
    "peft.no_module": "{folder}: the adapter changes {module}, which model {model} does not have: it was made for "
                      "another base model",
    "peft.module_type": "{folder}: the adapter changes {module}, a {type}; ICL Lab's LoRA applies to linear layers "
                        "only",
    "peft.shape": "{folder}: {tensor} is {found}, but {module} of model {model} needs {expected}: the adapter was "
                  "made for another base model, or with another rank",
    # exports to serving stacks (methods.export_method)
    "export.unknown_format": "no export format '{format}'; formats: {formats}",
    "export.not_peft": "{method} cannot be written as a PEFT adapter: a PEFT adapter holds LoRA weights, which only "
                       "{methods} trains (docs/elsewhere.md)",
    "export.not_control_vector": "{method} cannot be written as a llama.cpp control vector: llama.cpp adds one fixed "
                                 "vector to the residual stream after a block, at every position and every "
                                 "generated token, and {method} changes the model otherwise (methods with this "
                                 "export: {methods}; docs/elsewhere.md says what each method changes)",
    "export.not_steered": "{method} cannot be written as lm-eval's steered-model file: SteeredModel adds fixed "
                          "vectors to modules' outputs at every position, the answer's tokens included, and "
                          "{method} changes the model otherwise (methods with this export: {methods}; "
                          "docs/elsewhere.md says what each method changes; `icl-lab harness` runs it in the "
                          "harness as it is)",
    # lm-evaluation-harness (icr_app.harness)
    "harness.no_lm_eval": "lm-evaluation-harness is not installed; install it with: {install}",
    "harness.prompt_method": "{method} changes the prompt, not the model: in the harness, its prompts are the task's "
                             "own (for few-shot, the harness's num_fewshot: `icl-lab harness --num-fewshot K`)",
    # ICR's router
    "icr.no_folder": "ICR router folder {folder}: no such folder",
    "icr.not_in_folder": "no ICR router for model {model} in {folder} (routers there: {there}); train one with "
                         "`{command}`",
    "icr.not_shipped": "no pretrained ICR router ships for model '{model}' (routers ship for: {shipped}); train one "
                       "with `{command}` and name its folder (or a folder of routers) with --icr-router or "
                       "$ICL_LAB_ROUTERS",
    # ELICIT's library
    "elicit.not_shipped": "no ELICIT library ships for model '{model}' (libraries ship for: {shipped}); build one "
                          "with `{command}` and name it with --elicit-library",
    # ATV's generator
    "atv.not_shipped": "no ATV generator ships for model '{model}' (generators ship for: {shipped}); train one "
                       "with `{command}` and name it with --atv-generator",
    # a model that does not fit
    "model.needs_offload": "the device map of {name} sends weights to disk; give --offload-folder DIR",
    "model.too_large": "model {name} needs {need} on device {device} in {dtype} ({total} in all, estimated from its "
                       "config), but only {limit} is available there. Flags that would make it fit: {flags}",
    "model.not_builtin": "'{name}' is not a built-in model; built-in: {builtin}",
    "model.not_installed": "model '{name}' is not installed ({err}) and the hub is unreachable; install it with: "
                           "{hint}",
    "model.unknown": "unknown model '{name}': not a built-in name, a .gguf file, a local checkpoint directory, or a "
                     "reachable hub id. Built-in: {builtin}",
    "model.no_such_gguf": "{file}: no such GGUF file",
    "model.bad_gguf": "{file}: not a GGUF file that transformers can read and dequantise (truncated, corrupted, or "
                      "an architecture it does not convert): {err}",
    "model.kernel": "unknown attention kernel '{kernel}': ICL Lab runs its own attention function, which calls one "
                    "of {kernels}",
    "model.quantization": "unknown quantisation '{quantization}'; expected one of {known}",
    "model.quantized": "{what} cannot run on a model loaded with {quantization} quantisation: {why}; load the "
                       "model without --quantization to run it",
    "model.no_bitsandbytes": "--quantization {quantization} needs bitsandbytes; install it with: {install}",
    "model.unsupported": "ICL Lab does not know the '{model_type}' architecture; supported families: {families}",
    "model.too_large_all": "model {name} needs {need} on the devices allowed in {dtype} ({total} in all, estimated "
                           "from its config), but only {limit} is available there. Flags that would make it fit: "
                           "{flags}",
}


class UserError(ValueError):
    """An error the user can act on: `code` names its message (`MESSAGES`), `params` fill it in."""

    def __init__(self, code: str, **params: Any) -> None:
        if code not in MESSAGES:
            raise KeyError(f"no message for error code {code!r} (core/errors.py)")
        self.code, self.params = code, params
        super().__init__(MESSAGES[code].format(**params))

    def __reduce__(self) -> tuple:  # rebuilt from its code and params (another process, a copy)
        return functools.partial(type(self), self.code, **self.params), ()


class TaskError(UserError):
    """A task file, table or dataset spec that cannot be used, with a message meant for the user."""
