"""Every string the page shows, in English and Simplified Chinese, under one key each (`icr_app.app.i18n`).

A `{name}` in a string is filled in by the server (`say(key, name=...)`); the strings the browser translates
(`t(key)`) have none. The Chinese follows the field's usage in Chinese write-ups on in-context learning:
上下文学习 (ICL), 零样本 / 少样本, 任务嵌入, 注意力头, 标签词, 锚点, 信息流, 秩一更新, 隐式上下文学习.

The backend's errors are keyed by their code, "error.<code>": the English is the backend's own message
(`core.errors.MESSAGES`), the Chinese is written here with the same placeholders (`messages.translated_error`).
"""

from __future__ import annotations

from icr_app.core.errors import MESSAGES

EN: dict[str, str] = {
    "language": "Language",
    "intro": """# ICL Lab
Adapt a language model to a task from a handful of examples, and compare on the same query:
**zero-shot** (just the query), **few-shot** (examples in the prompt: explicit in-context learning), and
implicit methods that turn the examples into something injected inside the model, so the prompt stays as
short as zero-shot: **SITE** (per-head task embeddings with learned head weights) and **ICR** (a router
trained once on other tasks that bends attention along principal ICL directions, with no examples at all).

Pick a task (built-in, uploaded, or edited in the table) → type a query and press **Answer** →
build the methods that learn from the examples → open the tabs below to see *why* it works.
""",
    # the answers section
    "model": "Model",
    "builtin_task": "Built-in task",
    "upload": "…or upload CSV / TSV / JSON / JSONL (columns input, output)",
    "examples_editable": "Examples (editable)",
    "examples": "examples",
    "use_table": "Use this table as the task",
    "query": "Query",
    "shots": "few-shot demonstrations",
    "seed": "seed",
    "one_click": "one-click queries (a built-in task and one of its inputs)",
    "shown": "methods side by side",
    "answer": "Answer",
    "build_selected": "Build selected methods",
    "cancel_build": "Cancel build",
    "prompt_used": "prompt used",
    "batch": "A batch of queries",
    "batch_queries": "one query per line",
    "answer_all": "Answer all",
    "batch_table": "predictions of the chosen methods (the built ones, for those that build)",
    "batch.query": "query",
    "batch.model": "model",
    "label_probabilities": "label probabilities",
    "bars.open": "open task: the answer is generated text",
    "bars.axis": "probability over the label set",
    "describe.classification": "classification over {n} labels: {labels}",
    "describe.open": "open task (answers are generated)",
    "describe": "**{name}**: {n} examples; {kind}",
    "describe.model": "{description} · model **{model}**",
    "english_only": "_{model} splits each Chinese character into {ratio:.1f} tokens on average: its vocabulary and "
                    "its training text are English, so it reads these examples as strings of bytes and every method "
                    "answers them weakly here. They are written for a multilingual model such as Gemma-3-270M._",
    "not_built": "not built for this task yet: press “Build selected methods”",
    "cannot_answer": "cannot answer: {err}",
    "not_available": "not available",
    "not_built_yet": "not built yet",
    "empty": "(empty)",
    "fact.ms": "{ms:.0f} ms",
    "fact.model": "model {model}",
    "fact.prompt": "prompt {n} tokens",
    "fact.stored": "{n:,} stored parameters",
    "fact.trained": "{n:,} trained",
    "fact.built": "built in {s:.1f} s",
    "fact.shipped": "answer shipped with the app, timed when it was made",
    "kind.baseline": "baseline",
    "kind.implicit": "implicit ICL: nothing added to the prompt",
    "kind.fine-tuning": "explicit fine-tuning of weights, not implicit ICL",
    "after_answers": "drawn once the answer panels above have answered",
    "built_note": "{title}: built in {s:.1f} s",
    "built_note.model": "{note} (on {model})",
    "cannot_build": "{title}: cannot be built for this task: {err}",
    "nothing_to_build": "nothing to build: the chosen methods are built already or need nothing",
    "building": "building {title}",
    # the methods' names
    "method.zero-shot": "Zero-shot",
    "method.few-shot": "Few-shot (explicit ICL)",
    "method.site": "SITE (task embedding)",
    "method.icr": "ICR (pretrained router)",
    "method.lora": "LoRA (explicit fine-tuning)",
    "method.task-vector": "Task vector",
    "method.function-vector": "Function vector",
    "method.i2cl": "I2CL (context vectors)",
    "method.icv": "ICV (in-context vector)",
    "method.learned-task-vector": "Learned task vector",
    # messages
    "error.no_file": "no file uploaded",
    "error.table_columns": "the table needs an input and an output column",
    "error.no_query": "type a query first",
    "error.model_not_offered": "{name} is not one of this page's models ({models})",
    "error.model_budget": "{name} needs {need}, but only {room} is free beside the models visitors are using now "
                          "({kept}); your model stays as it was. Try again when they are done, or ask whoever runs "
                          "the page for a larger --max-models or memory",
    "info.loading_model": "Loading {name} for you (other visitors keep their models)…",
    "error.model_budget_count": "{name} cannot be loaded now: the page keeps at most {n} model(s) loaded and "
                                "visitors are using them ({kept}); your model stays as it was. Try again when they "
                                "are done, or ask whoever runs the page for a larger --max-models",
    "error.no_batch": "type one query per line",
    "warning.batch_cut": "only the first {n} queries are answered",
    "warning.query_cut": "the query was cut to its first {n} characters",
    "error.cancelled": "cancelled",
    "error.no_method": "choose at least one method",
    "error.nothing_evaluated": "nothing evaluated yet",
    "error.classification_only": "the anchor analyses need a classification task (label words are the anchors)",
    # the tour
    "tour": "Tour",
    "tour.intro": "Five steps, one idea each. Each figure is live: change the control under it.",
    "tour.step1": "**1. Examples in the prompt change the answer.** Few-shot prompting shows the model labelled "
                  "examples before the query; the same query gets a different answer than alone (zero-shot). Type a "
                  "query and compare.",
    "tour.step2": "**2. A few heads carry the task.** SITE averages every head's output over few-shot prompts and "
                  "learns which heads should carry that task embedding into a zero-shot prompt. Turn its strength up "
                  "and watch the answer move with no example in the prompt.",
    "tour.step3": "**3. A router can bend attention without any example.** ICR was trained once on other tasks; for "
                  "each query it decides how strongly to push attention along principal ICL directions, and in which "
                  "heads.",
    "tour.step4": "**4. Label words are anchors.** In shallow layers the text of each example flows into its label "
                  "word; in deep layers the answer position reads the label words. Slide through the layers.",
    "tour.step5": "**5. A context is a rank-1 weight update.** What the examples change at the query equals a rank-1 "
                  "change of one MLP matrix (plus a shift of the residual stream): the singular values show one, "
                  "then nothing.",
    "tour.fig1": "step 1",
    "tour.try1": "Try it with the query above",
    "tour.map2": "step 2: SITE's heads",
    "tour.fig2": "step 2: SITE's answer",
    "tour.strength": "SITE's strength (1 = as learnt)",
    "tour.fig3": "step 3: the router's gate per head",
    "tour.try3": "Route the query above",
    "tour.fig4": "step 4: anchor flow",
    "tour.fig5": "step 5: singular values of ΔW",
    "layer": "layer",
    "tour.open_task": "an open task: see the answers above (the tour's bars need labels)",
    "tour.versus": "“{query}”: zero-shot vs few-shot",
    "tour.zero": "zero-shot",
    "tour.few": "{n}-shot",
    "tour.build_site": "build SITE for this task (SITE tab) to try it",
    "tour.site_map": "SITE's head map appears here",
    "tour.site_answer": "SITE's answer appears here",
    "tour.site_at": "SITE at {strength:.0%}",
    "tour.site_no_example": "SITE's answer with no example in the prompt",
    "tour.no_flow": "compute the flow in the Anchor flow tab (shipped for the built-in tasks)",
    "tour.no_rank1": "run the rank-1 check in its tab (shipped for the built-in tasks)",
    "probability": "probability",
    "label": "label",
    # the tabs of built methods
    "cancel": "Cancel",
    "not_built_here": "_not built for this task yet: choose {title} above and press “Build selected methods”_",
    "download.site": "download this SITE task (safetensors)",
    "download.lora": "download this LoRA adapter (safetensors)",
    "download.task-vector": "download this task vector (safetensors)",
    "download.function-vector": "download this function vector (safetensors)",
    "download.i2cl": "download this I2CL (safetensors)",
    "download.icv": "download this ICV (safetensors)",
    "download.learned-task-vector": "download this learned task vector (safetensors)",
    "site.tab": "SITE head map",
    "site.explain": "SITE averages each attention head's output at the last token over many few-shot prompts (the "
                    "task embedding), then learns a weight α per head: how much of the embedding replaces the head's "
                    "zero-shot output. Heads near 1 carry the task. Reading guide: bright cells are the heads whose "
                    "output SITE replaces by the task embedding.",
    "site.not_built": "_not built for this task yet: press Build SITE_",
    "site.empty": "SITE is not built for this task yet",
    "site.steps": "training steps",
    "site.build": "Build SITE",
    "site.figure": "α per layer and head",
    "site.load": "load a SITE task (.safetensors)",
    "site.building": "building SITE",
    "site.summary": "SITE for **{task}**: {n_prompts} prompts × {n_demos} demos, {objective} objective; {steps} steps "
                    "(best {best}); train loss {train:.3f}, val loss {val:.3f}; built in {s:.0f} s",
    "icr.tab": "ICR routing",
    "icr.explain": "ICR adds a low-rank bias to the attention logits of the last third of the layers, along principal "
                   "ICL directions (PIDs) found from many ICL prompts. A small router reads the query and sets α(x): "
                   "how much to push along each direction, and γ(x): how much each head takes it. It was trained once "
                   "on other tasks and is reused here with no examples. Reading guide: α(x) is red or blue where the "
                   "router pushes a layer along a direction (the sign says which way); bright cells of γ(x) are the "
                   "heads that take the push, blank rows the layers left alone.",
    "lora.tab": "LoRA (explicit fine-tuning)",
    "lora.explain": "**Explicit fine-tuning, not in-context learning.** LoRA changes the model's weights: it trains a "
                    "low-rank update ΔW = (α/r)·B·A of each attention projection on the task's examples (the loss is "
                    "the answer tokens' only), stops when a held-out part of the examples stops improving, and merges "
                    "the update into a private copy of the model, so it answers zero-shot prompts at zero-shot cost. "
                    "It works because gradient descent writes the task straight into the weights; it is the reference "
                    "the implicit methods (SITE, ICR) are measured against, which keep the weights and steer the "
                    "activations with far fewer trained numbers.",
    "lora.not_built": "_not built for this task yet_",
    "lora.steps": "at most this many training steps",
    "lora.train": "Fine-tune LoRA",
    "lora.figure": "training loss and validation accuracy",
    "lora.second": "trained parameters, LoRA and SITE",
    "lora.load": "load a LoRA adapter (.safetensors)",
    "lora.training": "training LoRA",
    "lora.summary": "LoRA for **{task}**: {n:,} trained parameters (rank {r} on {modules}); {steps} steps, kept step "
                    "{best} (validation loss {loss:.3f}, accuracy {acc:.0%}); built in {s:.0f} s",
    "lora.summary_peft": "LoRA read from the PEFT folder **{task}**: {n:,} parameters (rank {r} on {modules}), "
                         "trained elsewhere",
    "tv.tab": "Task vector",
    "tv.explain": "A few-shot prompt makes the model compute, at its last token, a state that already says which task "
                  "to do: the demonstrations are compressed into it. The task vector is that state after one block, "
                  "averaged over few-shot prompts of the task (each ending in a query that is not one of its "
                  "demonstrations). On a zero-shot query it is written over the query's own last-token state at that "
                  "block, so the layers above read the task from it and apply it to the query. Too early a block and "
                  "the query has not been read yet; too late and the answer is already fixed: the block is chosen on "
                  "held-out training examples.",
    "tv.figure": "validation accuracy per block",
    "tv.summary": "Task vector for **{task}**: {n_prompts} prompts × {n_demos} demos; block {layer} chosen on {n_val} "
                  "held-out examples (accuracy {acc:.2f}, zero-shot {zs:.2f}); {n:,} stored numbers; "
                  "built in {s:.0f} s",
    "fv.tab": "Function vector",
    "fv.explain": "A few attention heads carry the task from the demonstrations to the last token. To find them, the "
                  "demonstrations' labels are shuffled, which breaks the task, and each head in turn gets back its "
                  "average output from correct few-shot prompts: the rise in the probability of the right answer is "
                  "that head's indirect effect (the map; the same axes and colours as SITE's α map). The outputs of "
                  "the k strongest heads, mapped into the residual stream by their output projections and summed, are "
                  "the function vector; added to a zero-shot query's last-token state a third of the way up the "
                  "model, it makes the model do the task without any demonstration.",
    "fv.figure": "average indirect effect per layer and head",
    "fv.build_site": "_build SITE too to compare its head selection with these heads_",
    "fv.none": "none",
    "fv.overlap": "**{n} of the top {k} heads** here are also among SITE's top {k} by α: {listed}",
    "fv.summary": "Function vector for **{task}**: mean head outputs over {n_prompts} prompts, indirect effects over "
                  "{n_corrupted} shuffled-label prompts ({n_demos} demos each); top {k} heads {heads}; added after "
                  "block {layer}; {n:,} stored numbers; built in {s:.0f} s",
    "i2cl.tab": "I2CL coefficients",
    "i2cl.explain": "I2CL runs each demonstration on its own and averages, per layer, what the attention and the MLP "
                    "write into the residual stream at its last token: two context vectors per layer that summarise "
                    "the task. On a zero-shot query it mixes them into every position, out' = β·out + λ·v, with 4 "
                    "numbers per layer calibrated on the training examples while the model stays frozen. A large λ is "
                    "a layer where the demonstrations' summary helps; β below 1 is a layer where the query's own "
                    "output is damped.",
    "i2cl.figure": "λ and β per layer",
    "i2cl.summary": "I2CL for **{task}**: {n_demos} demonstrations, calibrated on {n_cal} examples for {steps} steps "
                    "({loss} loss); built in {s:.0f} s",
    "ltv.tab": "Learned task vector",
    "ltv.explain": "A task vector read off few-shot prompts is only as good as the model's own summary of the "
                   "demonstrations. A learned task vector is trained instead: one vector, added to the residual "
                   "stream at a zero-shot query's last token after one block, is moved by gradient descent until the "
                   "right answers of the training examples become likely, while the model stays frozen. One vector is "
                   "trained at every block (a sweep), and the one that answers the most held-out examples right is "
                   "kept (left); on the right, how long the vector is next to the hidden state it is added to.",
    "ltv.figure": "held-out accuracy per block, and the vector's norm",
    "ltv.summary": "Learned task vector for **{task}**: trained on {n_fit} zero-shot prompts for {steps} steps at "
                   "each of {n_layers} blocks; block {layer} chosen on {n_val} held-out examples (accuracy {acc:.2f}, "
                   "zero-shot {zs:.2f}); ‖v‖ = {norm:.1f} against a residual stream of {residual:.1f}; added at "
                   "strength {strength:g}; {n:,} trained numbers; built in {s:.0f} s",
    "icv.tab": "ICV strength",
    "icv.explain": "ICV compares, for each demonstration, the model's hidden state at the end of the query with the "
                   "state once the answer is written: the shift that answering makes. The main direction of these "
                   "shifts in each layer (their first principal component) is the in-context vector. On a zero-shot "
                   "query it turns every hidden state towards that direction by a strength λ while keeping its "
                   "length, so the model is nudged into answer mode for this task without any demonstration in the "
                   "prompt. λ is picked on held-out training examples: too small does nothing, too large breaks the "
                   "model.",
    "icv.figure": "validation accuracy per λ",
    "icv.summary": "ICV for **{task}**: {n_demos} demonstrations, λ = {strength:g} chosen on {n_val} held-out "
                   "examples; built in {s:.0f} s",
    # the analyses
    "anchors.tab": "Anchor flow",
    "anchors.explain": "Saliency A ⊙ ∂L/∂A tells how much each attention edge matters for the answer. Label words act "
                       "as anchors: in shallow layers text flows into the label words (S_wp); in deep layers the "
                       "answer reads them (S_pq). The curves average several prompts; below, one prompt is written "
                       "out with a layer's strongest links drawn over it.",
    "anchors.prompts": "prompts to average",
    "anchors.compute": "Compute flow",
    "anchors.curves": "flow per layer",
    "anchors.heads": "heads",
    "anchors.all_heads": "all heads",
    "anchors.threshold": "hide links weaker than (share of the strongest)",
    "anchors.arcs": "one prompt's anchor flow",
    "anchors.isolation_guide": "**Isolation**: block label words (or as many random tokens) from earlier tokens in "
                               "the first or last K layers. Loyalty = agreement with the unmodified model. Reading "
                               "guide: the label-word bars drop far more than the random ones when the label words "
                               "really are the anchors.",
    "anchors.k": "K layers",
    "anchors.run_isolation": "Run isolation",
    "anchors.isolation": "isolation",
    "anchors.using_guide": "**Using the anchors**: *re-weighting* learns one scale per layer, head and label word "
                           "from 4 examples per class; *compression* answers against a KV cache kept only at label "
                           "words and formatting tokens; *confusion* compares how close the label words' keys sit "
                           "with which classes the model confuses.",
    "anchors.experiment": "experiment",
    "anchors.re-weighting": "re-weighting",
    "anchors.compression": "compression",
    "anchors.confusion": "confusion",
    "held_out": "held-out queries",
    "anchors.run": "Run experiment",
    "anchors.plot": "anchor experiment",
    "anchors.download": "Download these results (JSON)",
    "anchors.file": "anchor results",
    "anchors.no_flow": "no flow computed yet",
    "anchors.saliency": "saliency",
    "anchors.isolating": "isolating",
    "anchors.no_isolation": "isolation not run yet",
    "anchors.not_run": "{kind} not run yet",
    "rank1.tab": "Rank-1 update",
    "rank1.explain": "A prompt's context changes a block's MLP input at the query. That change equals a rank-1 update "
                     "of the MLP's first weights plus a residual patch: the context-free block with the patch "
                     "reproduces the with-context output exactly. The patch is specific to its query: applied to "
                     "another query it closes only part of that query's gap. Reading guide: the blue line (patched) "
                     "sits at rounding level, far below the orange one (no patch); σ₂/σ₁ near 1e-7 means rank 1.",
    "rank1.layer": "layer to detail",
    "rank1.run": "Run the rank-1 check",
    "rank1.error": "identity error per layer",
    "rank1.sv": "singular values of ΔW",
    "rank1.norms": "|ΔW| as demonstrations are added",
    "rank1.transfer": "transfer to other queries",
    "rank1.download": "Download this result (JSON)",
    "rank1.file": "rank-1 report",
    "rank1.empty": "run the rank-1 check, or pick a built-in task to see the shipped result",
    "rank1.progress": "rank-1",
    # the Evaluate tab
    "evaluate.tab": "Evaluate",
    "evaluate.explain": "Scores the methods on a seeded held-out split of the task; latency is measured in the same "
                        "run (after an untimed warm-up), so the ratios are fair. Methods that learn from examples are "
                        "built on the train split. Reading guide: compare accuracy at a glance (the bars' whiskers "
                        "are 95% intervals), then the per-item table for where two methods disagree, with the paired "
                        "test of whether their difference is more than chance.",
    "evaluate.methods": "methods",
    "evaluate.run": "Evaluate",
    "evaluate.results": "results",
    "evaluate.plot": "accuracy per method",
    "evaluate.export": "Download the results (JSON, CSV)",
    "evaluate.json": "results as JSON (the CLI's --json)",
    "evaluate.csv": "results as CSV",
    "evaluate.items": "item by item (✓ right, ✗ wrong)",
    "evaluate.compare": "compare",
    "evaluate.with": "with",
    "evaluate.only": "the items only one of the two gets right",
    "evaluate.empty": "press Evaluate (a built-in task shows its shipped run)",
    "evaluate.evaluating": "evaluating",
    "evaluate.both_needed": "_{a} and {b} must both be in the run and have served the task_",
    "evaluate.split": "both right on **{both}**, both wrong on **{neither}**, only **{a}** on **{n_a}**, only **{b}** "
                      "on **{n_b}** of {n} items",
    "evaluate.paired": "{a} − {b}: **{diff:+.3f}** (95% interval {lo:+.3f} to {hi:+.3f}); exact McNemar test on the "
                       "items only one gets right: p = {p:.3g}, {verdict}",
    "evaluate.significant": "a difference the test supports (p < 0.05)",
    "evaluate.not_significant": "**not significant** (p ≥ 0.05): the items they disagree on could split this way by "
                                "chance",
    "rank1.no_update": "Layer {layers}: no update (ΔW = 0, σ₂/σ₁ undefined). The context does not change the MLP's "
                       "input at the query there, so there is nothing for a weight update to carry; in GPT-NeoX's "
                       "parallel block the MLP reads the block's input, which at the first layer is the query token's "
                       "embedding alone.",
    # the figures: titles, axes, legends and hover text (`say`, passed to the figure builders); `%{{x}}` is a
    # Plotly placeholder in a hover template, its braces doubled for `say`
    "fig.accuracy": "accuracy",
    "fig.val_accuracy": "validation accuracy",
    "fig.first_token_accuracy": "first-token accuracy",
    "fig.gold_probability": "mean gold-label probability",
    "fig.zero_shot_at": "zero-shot {acc:.2f}",
    "fig.method": "method",
    "fig.head": "head",
    "fig.head_n": "head {head}",
    "fig.layer_head_value": "layer %{{y}}, head %{{x}}<br>{value} = %{{z:.3f}}",
    "fig.na": "n/a",
    "fig.eval.title": "{task}: accuracy on {n} held-out queries",
    "fig.eval.bar": "{accuracy:.2f} · {ratio:.2f}× time",
    "fig.eval.hover": "%{{x}}: accuracy %{{y:.3f}} (95% interval %{{customdata[0]:.3f}}–%{{customdata[1]:.3f}})",
    "fig.site.title": "SITE head selection for {task}: mean α {mean:.2f}, {binary:.0%} of heads near 0 or 1",
    "fig.icr.title": "{map}{of} for: {query}",
    "fig.icr.mean_of": " (mean of {n} routers)",
    "fig.icr.alpha_hover": "layer %{{y}}, direction %{{x}}<br>α = %{{z:.3f}}",
    "fig.icr.direction": "principal ICL direction",
    "fig.fv.title": "Function vector for {task}: indirect effect per head, top {k} outlined (added after block "
                    "{layer})",
    "fig.fv.aie": "AIE",
    "fig.fv.top": "top {k}",
    "fig.fv.hover": "layer %{{y}}, head %{{x}}: in the function vector",
    "fig.tv.title": "Task vector for {task}: accuracy on {n} held-out examples per block",
    "fig.tv.name": "task vector",
    "fig.tv.hover": "block %{{x}}<br>accuracy %{{y:.2f}}<br>mean gold probability %{{customdata:.3f}}",
    "fig.tv.chosen": "chosen: block {layer}",
    "fig.tv.block": "block whose output is replaced at the last token",
    "fig.tv.accuracy": "validation accuracy (first token)",
    "fig.ltv.title": "Learned task vector for {task}: one vector trained per block tried, scored on {n} held-out "
                     "examples",
    "fig.ltv.sweep": "held-out accuracy per block",
    "fig.ltv.norms": "vector and residual stream norms",
    "fig.ltv.name": "learned task vector",
    "fig.ltv.hover": "block %{{x}}<br>accuracy %{{y:.2f}}<br>held-out loss %{{customdata:.3f}}",
    "fig.ltv.chosen": "chosen: block {layer}",
    "fig.ltv.block": "block whose output gets the vector at the last token",
    "fig.ltv.accuracy": "held-out accuracy",
    "fig.ltv.vector": "‖v‖ learnt",
    "fig.ltv.residual": "mean ‖h‖ of the residual stream",
    "fig.ltv.norm": "norm",
    "fig.ltv.norm_hover": "block %{{x}}<br>{name}: %{{y:.2f}}",
    "fig.i2cl.title": "I2CL coefficients for {task}: calibration loss {zero_shot:.3f} (zero-shot) → {init:.3f} (init) "
                      "→ {calibrated:.3f} ({steps} steps)",
    "fig.i2cl.lambda": "λ: context vector weight",
    "fig.i2cl.beta": "β: query output weight",
    "fig.i2cl.lambda_axis": "λ (context)",
    "fig.i2cl.beta_axis": "β (query)",
    "fig.i2cl.attention": "attention",
    "fig.i2cl.mlp": "mlp",
    "fig.i2cl.hover": "layer %{{x}}<br>{name} = %{{y:.3f}}<br>|v| = %{{customdata:.2f}}",
    "fig.icv.title": "ICV strength sweep for {task} on {n} validation examples ({direction}, {site} output)",
    "fig.icv.hover": "λ = %{{x}}<br>accuracy %{{y:.3f}}<br>{tiebreak} %{{customdata:.3f}}",
    "fig.icv.chosen": "chosen λ = {strength:g}",
    "fig.icv.chosen_hover": "chosen λ = %{{x}}<br>accuracy %{{y:.3f}}",
    "fig.icv.strength": "λ (strength)",
    "fig.lora.title": "LoRA on {task}: {steps} steps on {n_fit} examples, validated on {n_val}",
    "fig.lora.train_loss": "training loss (batch)",
    "fig.lora.train_hover": "step %{{x}}<br>loss %{{y:.3f}}",
    "fig.lora.val_loss": "validation loss",
    "fig.lora.val_loss_hover": "step %{{x}}<br>validation loss %{{y:.3f}}",
    "fig.lora.val_accuracy_hover": "step %{{x}}<br>validation accuracy %{{y:.0%}}",
    "fig.lora.kept": "kept: step {step}",
    "fig.lora.step": "training step",
    "fig.lora.loss": "answer-token cross-entropy",
    "fig.lora.lora": "LoRA (fine-tuning)",
    "fig.lora.site": "SITE (implicit ICL)",
    "fig.lora.params": "trained parameters",
    "fig.lora.params_alone": "trained parameters (build SITE to compare)",
    "fig.lora.params_hover": "%{{x}}<br>%{{y:,}} trained parameters",
    "fig.lora.params_log": "trained parameters (log scale)",
    "fig.flow.title": "Information flow, {task} on {model} ({n} prompts, ~{tokens:.0f} tokens)",
    "fig.flow.facts": "first {third} layers: S_wp {wp_shallow:.2f}, S_pq {pq_shallow:.2f}; last {third} layers: S_wp "
                      "{wp_deep:.2f}, S_pq {pq_deep:.2f}; S_pq > S_wp in {lead} of {n} layers",
    "fig.flow.since": ", in every layer from {since} on",
    "fig.flow.wp": "text → label words (S_wp)",
    "fig.flow.pq": "label words → target (S_pq)",
    "fig.flow.ww": "other pairs (S_ww)",
    "fig.flow.hover": "layer %{{x}}: {flow} share %{{y:.3f}}",
    "fig.flow.share": "share of the layer's flow",
    "fig.flow.arcs_title": "Anchor flow at layer {layer}, {which}",
    "fig.flow.guide": "Read it as: blue links carry a demonstration's text into its label word (strong in shallow "
                      "layers); red links carry the label words to the answer position (strong in deep layers). "
                      "Wider = more salient.",
    "fig.flow.link": "{src} → {dst}: I = {value:.3g} ({share:.0%} of the strongest)",
    "fig.flow.token": "token {i}: {token} ({role})",
    "fig.role.target": "target",
    "fig.role.label_word": "label word",
    "fig.role.format": "format",
    "fig.role.text": "text",
    "fig.iso.title": "Attention isolation: label words vs random tokens cut off from earlier text",
    "fig.iso.none": "none",
    "fig.iso.label_words": "label words",
    "fig.iso.random": "random tokens",
    "fig.iso.first": "{name}, first {k}",
    "fig.iso.last": "{name}, last {k}",
    "fig.label_loyalty": "label loyalty",
    "fig.loyalty": "loyalty",
    "fig.rw.title": "Anchor re-weighting",
    "fig.rw.before": "ICL (1 demo per class)",
    "fig.rw.after": "+ anchor re-weighting",
    "fig.comp.title": "Hidden-anchor compression, {task} (n={n}, {tokens} demonstration tokens)",
    "fig.comp.quality": "quality",
    "fig.comp.speedup_title": "speed-up vs full few-shot",
    "fig.comp.speedup": "speed-up",
    "fig.comp.bar": "{speedup:.2f}x, {tokens} tok",
    "fig.comp.full": "full few-shot",
    "fig.comp.full_cache": "full cache",
    "fig.comp.anchors_cache": "anchors cache",
    "fig.conf.title": "Anchor confusion diagnosis, {task} (pair correlation {corr})",
    "fig.conf.closeness": "anchor closeness, layer {layer}",
    "fig.conf.confusion": "confusion (accuracy {accuracy:.2f})",
    "fig.conf.predicted": "predicted",
    "fig.r1.sv_title": "Singular values of ΔW, layer {layer} ({task}, {model})",
    "fig.r1.no_update": "no update: ΔW = 0",
    "fig.r1.sv": "singular value",
    "fig.r1.value": "value (log)",
    "fig.r1.norm_title": "Size of the patch as demonstrations are added, layer {layer}",
    "fig.r1.demos": "demonstrations in the prompt",
    "fig.r1.norm_w": "Frobenius norm of ΔW",
    "fig.r1.norm_h": "norm of Δh",
    "fig.r1.error_title": "Rank-1 identity, max abs error at the query ({task}, {model})",
    "fig.r1.patched": "patched block vs with context",
    "fig.r1.unpatched": "unpatched block vs with context",
    "fig.r1.hover": "layer %{{x}}: %{{y:.2e}} (%{{customdata:.1f}} ulp)",
    "fig.r1.tolerance": "tolerance {tolerance:g}",
    "fig.r1.error": "max abs error (log)",
    "fig.r1.transfer_title": "Does the patch transfer? Mean over {n} other queries",
    "fig.r1.own": "own patch",
    "fig.r1.main": "patch of the main query",
    "fig.r1.none": "no patch",
    "fig.r1.transfer_error": "max abs error vs with-context output (log)",
    # the Evaluate tab's table headers (the CSV download has the same)
    "evaluate.col.method": "method",
    "evaluate.col.error": "error",
    "evaluate.col.accuracy": "accuracy",
    "evaluate.col.interval": "95% interval",
    "evaluate.col.vs_zero_shot": "− zero-shot (McNemar p)",
    "evaluate.col.first_token": "first-token accuracy",
    "evaluate.col.latency": "latency ms/query",
    "evaluate.col.time_ratio": "× zero-shot time",
    "evaluate.col.prompt_tokens": "prompt tokens",
    "evaluate.col.build_s": "build s",
    "evaluate.col.stored": "stored parameters",
    "evaluate.col.trained": "trained parameters",
    "evaluate.col.input": "input",
    "evaluate.col.gold": "gold",
    "evaluate.col.right": "right",
    "evaluate.ns": ", ns",
    # ELICIT (its method title, tab, figure and summary)
    "method.elicit": "ELICIT (capability library)",
    "download.elicit": "download this ELICIT method (safetensors)",
    "elicit.tab": "ELICIT library",
    "elicit.explain": "ELICIT keeps a library built once from other tasks: for each, the state a few-shot prompt "
                      "leaves at its last token after one block (averaged over 16-shot prompts, the block chosen "
                      "on held-out queries), and the prompts themselves. A small trained retriever compares each "
                      "query with the prompts of every entry; the best entry's vector is added, times the strength, "
                      "to the query's last-token state at that entry's block. A query whose best score is under "
                      "the threshold gets nothing and runs zero-shot. Nothing is learnt from this task's examples.",
    "elicit.figure": "the entry the retriever picked for each query, and its score",
    "elicit.summary": "ELICIT on **{task}**: a library of {n_entries} entries; a vector added to {injected} of {n} "
                      "queries (threshold {threshold:.3f}, recall {recall}); picked most: {top} ({count}); "
                      "strength {strength}",
    "fig.elicit.title": "ELICIT on {task}: the retriever's best entry for {n} queries",
    "fig.elicit.declined": "{entry} (declined)",
    "fig.elicit.hover": "query %{{x}}: %{{text}}<br>{entry}: score %{{y:.3f}}",
    "fig.elicit.threshold": "threshold {threshold:.3f} (recall {recall})",
    "fig.elicit.query": "query of the task",
    "fig.elicit.score": "retriever score of the best entry",
    **{f"error.{code}": message for code, message in MESSAGES.items()},
}

ZH: dict[str, str] = {
    "language": "语言",
    "intro": """# ICL Lab（上下文学习实验室）
只用少量示例让语言模型适应一个任务，并在同一个查询上比较：
**零样本**（只给查询）、**少样本**（把示例放进提示词：显式上下文学习），以及把示例变成注入模型内部的东西、
让提示词和零样本一样短的隐式上下文学习方法：**SITE**（每个注意力头的任务嵌入，加上学到的注意力头权重）和
**ICR**（在其他任务上训练一次的路由器，沿上下文学习的主方向调整注意力，完全不需要示例）。

选择一个任务（内置、上传，或在表格中编辑）→ 输入查询并点击 **回答** →
构建需要从示例中学习的方法 → 打开下面的标签页，看看它*为什么*有效。
""",
    "model": "模型",
    "builtin_task": "内置任务",
    "upload": "…或上传 CSV / TSV / JSON / JSONL（列名 input、output）",
    "examples_editable": "示例（可编辑）",
    "examples": "示例",
    "use_table": "把这张表用作任务",
    "query": "查询",
    "shots": "少样本示例数",
    "seed": "随机种子",
    "one_click": "一键查询（一个内置任务及其中一条输入）",
    "shown": "并排比较的方法",
    "answer": "回答",
    "build_selected": "构建所选方法",
    "cancel_build": "取消构建",
    "prompt_used": "使用的提示词",
    "batch": "批量查询",
    "batch_queries": "每行一个查询",
    "answer_all": "全部回答",
    "batch_table": "所选方法的预测（需要构建的方法只列出已构建的）",
    "batch.query": "查询",
    "batch.model": "模型",
    "label_probabilities": "标签概率",
    "bars.open": "开放任务：答案是生成的文本",
    "bars.axis": "在标签集合上的概率",
    "describe.classification": "{n} 个标签的分类：{labels}",
    "describe.open": "开放任务（答案由模型生成）",
    "describe": "**{name}**：{n} 个示例；{kind}",
    "describe.model": "{description} · 模型 **{model}**",
    "english_only": "_{model} 平均把每个汉字切成 {ratio:.1f} 个词元：它的词表和训练文本都是英文，读这些示例时只看到"
                    "一串字节，所以这里每种方法的回答都很弱。这些任务是为多语言模型（例如 Gemma-3-270M）编写的。_",
    "not_built": "尚未为此任务构建：请点击“构建所选方法”",
    "cannot_answer": "无法回答：{err}",
    "not_available": "不可用",
    "not_built_yet": "尚未构建",
    "empty": "（空）",
    "fact.ms": "{ms:.0f} 毫秒",
    "fact.model": "模型 {model}",
    "fact.prompt": "提示词 {n} 个词元",
    "fact.stored": "存储 {n:,} 个参数",
    "fact.trained": "训练 {n:,} 个参数",
    "fact.built": "构建用时 {s:.1f} 秒",
    "fact.shipped": "答案随应用预先生成，用时为生成时所测",
    "kind.baseline": "基线",
    "kind.implicit": "隐式上下文学习：提示词中不加任何内容",
    "kind.fine-tuning": "显式微调权重，不是隐式上下文学习",
    "after_answers": "上方的回答面板回答之后再绘制",
    "built_note": "{title}：构建用时 {s:.1f} 秒",
    "built_note.model": "{note}（在 {model} 上）",
    "cannot_build": "{title}：无法为此任务构建：{err}",
    "nothing_to_build": "无需构建：所选方法已构建好，或者不需要构建",
    "building": "正在构建 {title}",
    "method.zero-shot": "零样本",
    "method.few-shot": "少样本（显式上下文学习）",
    "method.site": "SITE（任务嵌入）",
    "method.icr": "ICR（预训练路由器）",
    "method.lora": "LoRA（显式微调）",
    "method.task-vector": "任务向量",
    "method.function-vector": "函数向量",
    "method.i2cl": "I2CL（上下文向量）",
    "method.icv": "ICV（上下文内向量）",
    "method.learned-task-vector": "学习得到的任务向量",
    "error.no_file": "没有上传文件",
    "error.table_columns": "表格需要一列输入和一列输出",
    "error.no_query": "请先输入一个查询",
    "error.model_not_offered": "{name} 不在本页面提供的模型之中（{models}）",
    "error.model_budget": "{name} 需要 {need}，但除了其他访客正在使用的模型（{kept}）之外只剩 {room} 可用；"
                          "你的模型保持不变。请等他们用完再试，或请运行本页面的人调大 --max-models 或内存",
    "info.loading_model": "正在为你加载 {name}（其他访客的模型不受影响）…",
    "error.model_budget_count": "现在无法加载 {name}：本页面最多同时加载 {n} 个模型，而其他访客正在使用它们（{kept}）；"
                                "你的模型保持不变。请等他们用完再试，或请运行本页面的人调大 --max-models",
    "error.no_batch": "请每行输入一个查询",
    "warning.batch_cut": "只回答前 {n} 个查询",
    "warning.query_cut": "查询被截断为前 {n} 个字符",
    "error.cancelled": "已取消",
    "error.no_method": "请至少选择一种方法",
    "error.nothing_evaluated": "还没有评测结果",
    "error.classification_only": "锚点分析需要分类任务（标签词就是锚点）",
    "tour": "导览",
    "tour.intro": "五个步骤，每步一个要点。每张图都是实时的：调整图下方的控件试试。",
    "tour.step1": "**1. 提示词中的示例会改变答案。** 少样本提示先给模型看带标签的示例，再给查询；同一个查询得到的答案"
                  "与单独提问（零样本）时不同。输入一个查询来比较。",
    "tour.step2": "**2. 少数注意力头承载任务。** SITE 在少样本提示上平均每个注意力头的输出，并学习哪些注意力头应该把"
                  "这个任务嵌入带进零样本提示。调高它的强度，看看提示词里没有示例时答案如何变化。",
    "tour.step3": "**3. 路由器无需示例就能调整注意力。** ICR 在其他任务上训练过一次；对每个查询，它决定沿上下文学习的"
                  "主方向推动注意力的力度，以及作用在哪些注意力头上。",
    "tour.step4": "**4. 标签词是锚点。** 在浅层，每个示例的文本信息流向它的标签词；在深层，答案位置读取标签词。"
                  "拖动滑块浏览各层。",
    "tour.step5": "**5. 上下文就是一次秩一更新。** 示例在查询处带来的改变，等于一个 MLP 矩阵的秩一更新（再加上残差流"
                  "的一个偏移）：奇异值只有一个明显不为零，其余几乎为零。",
    "tour.fig1": "第 1 步",
    "tour.try1": "用上面的查询试试",
    "tour.map2": "第 2 步：SITE 的注意力头",
    "tour.fig2": "第 2 步：SITE 的答案",
    "tour.strength": "SITE 的强度（1 = 学到的原值）",
    "tour.fig3": "第 3 步：路由器对每个注意力头的门控",
    "tour.try3": "为上面的查询计算路由",
    "tour.fig4": "第 4 步：锚点信息流",
    "tour.fig5": "第 5 步：ΔW 的奇异值",
    "layer": "层",
    "tour.open_task": "这是开放任务：请看上方的回答（导览的柱状图需要标签）",
    "tour.versus": "“{query}”：零样本 vs 少样本",
    "tour.zero": "零样本",
    "tour.few": "少样本（{n} 个示例）",
    "tour.build_site": "先为此任务构建 SITE（SITE 标签页）再来试",
    "tour.site_map": "SITE 的注意力头图显示在这里",
    "tour.site_answer": "SITE 的答案显示在这里",
    "tour.site_at": "SITE 强度 {strength:.0%}",
    "tour.site_no_example": "提示词中没有示例时 SITE 的答案",
    "tour.no_flow": "请在“锚点信息流”标签页计算信息流（内置任务已预先提供）",
    "tour.no_rank1": "请在其标签页运行秩一检验（内置任务已预先提供）",
    "probability": "概率",
    "label": "标签",
    "cancel": "取消",
    "not_built_here": "_尚未为此任务构建：请在上方选择 {title} 并点击“构建所选方法”_",
    "download.site": "下载这个 SITE 任务（safetensors）",
    "download.lora": "下载这个 LoRA 适配器（safetensors）",
    "download.task-vector": "下载这个任务向量（safetensors）",
    "download.function-vector": "下载这个函数向量（safetensors）",
    "download.i2cl": "下载这个 I2CL（safetensors）",
    "download.icv": "下载这个 ICV（safetensors）",
    "download.learned-task-vector": "下载这个学习得到的任务向量（safetensors）",
    "site.tab": "SITE 注意力头图",
    "site.explain": "SITE 在许多少样本提示上平均每个注意力头在最后一个词元处的输出（任务嵌入），然后为每个注意力头学习"
                    "一个权重 α：用多少任务嵌入替换该注意力头在零样本时的输出。接近 1 的注意力头承载任务。阅读指南："
                    "亮的格子就是 SITE 用任务嵌入替换其输出的注意力头。",
    "site.not_built": "_尚未为此任务构建：请点击“构建 SITE”_",
    "site.empty": "尚未为此任务构建 SITE",
    "site.steps": "训练步数",
    "site.build": "构建 SITE",
    "site.figure": "每层每个注意力头的 α",
    "site.load": "加载 SITE 任务（.safetensors）",
    "site.building": "正在构建 SITE",
    "site.summary": "**{task}** 的 SITE：{n_prompts} 个提示 × {n_demos} 个示例，{objective} 目标；{steps} 步"
                    "（最佳第 {best} 步）；训练损失 {train:.3f}，验证损失 {val:.3f}；构建用时 {s:.0f} 秒",
    "icr.tab": "ICR 路由",
    "icr.explain": "ICR 在最后三分之一的层里给注意力 logits 加上一个低秩偏置，方向是从大量上下文学习提示中找到的"
                   "上下文学习主方向（PID）。一个小路由器读取查询并给出 α(x)：沿每个方向推动多少，"
                   "以及 γ(x)：每个注意力头接受多少。它在其他任务上训练过一次，在这里直接复用，不需要示例。"
                   "阅读指南：α(x) 中红色或蓝色的位置是路由器沿某个方向推动某一层（正负号表示方向）；"
                   "γ(x) 中亮的格子是接受推动的注意力头，空白的行是未被改动的层。",
    "lora.tab": "LoRA（显式微调）",
    "lora.explain": "**显式微调，不是上下文学习。** LoRA 会改变模型的权重：它在任务示例上为每个注意力投影训练一个低秩"
                    "更新 ΔW = (α/r)·B·A（损失只算答案词元），当留出的一部分示例不再提升时停止，并把更新合并进模型的"
                    "一个私有副本，所以它以零样本的开销回答零样本提示。它之所以有效，是因为梯度下降把任务直接写进了"
                    "权重；它是衡量隐式方法（SITE、ICR）的参照，而隐式方法不改权重，只用少得多的训练参数来引导激活。",
    "lora.not_built": "_尚未为此任务构建_",
    "lora.steps": "最多训练这么多步",
    "lora.train": "微调 LoRA",
    "lora.figure": "训练损失和验证准确率",
    "lora.second": "训练参数量：LoRA 与 SITE",
    "lora.load": "加载 LoRA 适配器（.safetensors）",
    "lora.training": "正在训练 LoRA",
    "lora.summary": "**{task}** 的 LoRA：训练 {n:,} 个参数（秩 {r}，作用于 {modules}）；共 {steps} 步，保留第 {best} 步"
                    "（验证损失 {loss:.3f}，准确率 {acc:.0%}）；构建用时 {s:.0f} 秒",
    "lora.summary_peft": "从 PEFT 文件夹 **{task}** 读入的 LoRA：{n:,} 个参数（秩 {r}，作用于 {modules}），"
                         "在别处训练",
    "tv.tab": "任务向量",
    "tv.explain": "少样本提示让模型在最后一个词元处算出一个已经说明要做什么任务的状态：示例被压缩进了这个状态。任务向量"
                  "就是某一个块之后的这个状态，在该任务的多个少样本提示上取平均（每个提示都以一个不在其示例中的查询结尾）。"
                  "对零样本查询，它覆盖查询自己在该块处最后一个词元的状态，于是上面的层从中读出任务并作用于查询。块太早，"
                  "查询还没被读取；块太晚，答案已经定了：所以块是在留出的训练示例上选出来的。",
    "tv.figure": "每个块的验证准确率",
    "tv.summary": "**{task}** 的任务向量：{n_prompts} 个提示 × {n_demos} 个示例；"
                  "在 {n_val} 个留出示例上选出第 {layer} 块"
                  "（准确率 {acc:.2f}，零样本 {zs:.2f}）；存储 {n:,} 个数；构建用时 {s:.0f} 秒",
    "fv.tab": "函数向量",
    "fv.explain": "少数几个注意力头把任务从示例带到最后一个词元。为了找到它们，先打乱示例的标签（任务因此被破坏），再"
                  "依次让每个注意力头恢复它在正确少样本提示上的平均输出：正确答案概率的上升就是该注意力头的间接效应"
                  "（即这张图；坐标轴和颜色与 SITE 的 α 图相同）。最强的 k 个注意力头的输出经各自的输出投影映射到残差流"
                  "并求和，就是函数向量；在模型约三分之一高度处把它加到零样本查询最后一个词元的状态上，模型就能在没有"
                  "任何示例的情况下完成任务。",
    "fv.figure": "每层每个注意力头的平均间接效应",
    "fv.build_site": "_也构建 SITE，就能把它选出的注意力头与这些注意力头比较_",
    "fv.none": "无",
    "fv.overlap": "这里前 {k} 个注意力头中有 **{n} 个** 也在 SITE 按 α 排序的前 {k} 个之中：{listed}",
    "fv.summary": "**{task}** 的函数向量：在 {n_prompts} 个提示上平均注意力头输出，在 {n_corrupted} 个打乱标签的提示上"
                  "测量间接效应（每个 {n_demos} 个示例）；前 {k} 个注意力头 {heads}；加在第 {layer} 块之后；"
                  "存储 {n:,} 个数；构建用时 {s:.0f} 秒",
    "i2cl.tab": "I2CL 系数",
    "i2cl.explain": "I2CL 单独运行每个示例，并按层平均注意力和 MLP 在其最后一个词元处写入残差流的内容：每层两个概括"
                    "任务的上下文向量。对零样本查询，它把它们混入每个位置，out' = β·out + λ·v，每层 4 个数在训练示例上"
                    "校准，模型本身保持冻结。λ 大的层是示例概括起作用的层；β 小于 1 的层是查询自身输出被减弱的层。",
    "i2cl.figure": "每层的 λ 和 β",
    "i2cl.summary": "**{task}** 的 I2CL：{n_demos} 个示例，在 {n_cal} 个示例上校准 {steps} 步（{loss} 损失）；"
                    "构建用时 {s:.0f} 秒",
    "ltv.tab": "学习得到的任务向量",
    "ltv.explain": "从少样本提示中读出的任务向量，其好坏取决于模型自己对示例的概括。学习得到的任务向量则是训练出来的："
                   "在零样本查询的最后一个词元处、某个块之后加到残差流上的一个向量，用梯度下降调整，直到训练样本的正确"
                   "答案变得可能，而模型本身保持冻结。在每个块上各训练一个向量（扫描），保留在留出样本上答对最多的那个"
                   "（左图）；右图比较向量的长度和它所加到的隐藏状态的长度。",
    "ltv.figure": "每个块的留出准确率，以及向量的范数",
    "ltv.summary": "**{task}** 的学习任务向量：在 {n_fit} 个零样本提示上训练，每个块 {steps} 步，共 {n_layers} 个块；"
                   "在 {n_val} 个留出样本上选中第 {layer} 个块（准确率 {acc:.2f}，零样本 {zs:.2f}）；‖v‖ = {norm:.1f}，"
                   "残差流为 {residual:.1f}；以强度 {strength:g} 加入；{n:,} 个训练得到的数；构建用时 {s:.0f} 秒",
    "icv.tab": "ICV 强度",
    "icv.explain": "ICV 对每个示例比较模型在查询末尾的隐藏状态与写出答案之后的状态：作答带来的偏移。每层中这些偏移的"
                   "主方向（第一主成分）就是上下文内向量。对零样本查询，它把每个隐藏状态以强度 λ 转向这个方向并保持其"
                   "长度，使模型在提示词中没有任何示例时也进入这个任务的作答模式。λ 在留出的训练示例上选出：太小没有"
                   "作用，太大会破坏模型。",
    "icv.figure": "每个 λ 的验证准确率",
    "icv.summary": "**{task}** 的 ICV：{n_demos} 个示例，在 {n_val} 个留出示例上选出 λ = {strength:g}；"
                   "构建用时 {s:.0f} 秒",
    "anchors.tab": "锚点信息流",
    "anchors.explain": "显著性 A ⊙ ∂L/∂A 衡量每条注意力边对答案有多重要。标签词充当锚点：在浅层，文本信息流向标签词"
                       "（S_wp）；在深层，答案读取标签词（S_pq）。曲线是多个提示的平均；下方把一个提示逐词写出，并画出"
                       "某一层最强的连接。",
    "anchors.prompts": "平均的提示数",
    "anchors.compute": "计算信息流",
    "anchors.curves": "每层的信息流",
    "anchors.heads": "注意力头",
    "anchors.all_heads": "所有注意力头",
    "anchors.threshold": "隐藏弱于此值的连接（相对最强连接的比例）",
    "anchors.arcs": "一个提示的锚点信息流",
    "anchors.isolation_guide": "**隔离**：在前 K 层或后 K 层中，阻断标签词（或同样数量的随机词元）看到更早的词元。"
                               "忠实度 = 与未改动模型一致的比例。阅读指南：如果标签词真的是锚点，标签词的柱子会比随机"
                               "词元的下降得多得多。",
    "anchors.k": "K 层",
    "anchors.run_isolation": "运行隔离实验",
    "anchors.isolation": "隔离",
    "anchors.using_guide": "**利用锚点**：*重加权* 用每类 4 个示例为每层、每个注意力头和每个标签词学习一个缩放系数；"
                           "*压缩* 只保留标签词和格式词元处的 KV 缓存来作答；*混淆* 比较标签词的键向量彼此有多接近与"
                           "模型混淆哪些类别。",
    "anchors.experiment": "实验",
    "anchors.re-weighting": "重加权",
    "anchors.compression": "压缩",
    "anchors.confusion": "混淆",
    "held_out": "留出的查询数",
    "anchors.run": "运行实验",
    "anchors.plot": "锚点实验",
    "anchors.download": "下载这些结果（JSON）",
    "anchors.file": "锚点结果",
    "anchors.no_flow": "尚未计算信息流",
    "anchors.saliency": "显著性",
    "anchors.isolating": "正在隔离",
    "anchors.no_isolation": "尚未运行隔离实验",
    "anchors.not_run": "尚未运行{kind}",
    "rank1.tab": "秩一更新",
    "rank1.explain": "提示中的上下文会改变某个块在查询处的 MLP 输入。这个改变等于 MLP 第一层权重的一次秩一更新加上一个"
                     "残差补丁：无上下文的块加上补丁，能精确重现有上下文时的输出。补丁只针对它自己的查询：用到另一个查询"
                     "上，只能弥补那个查询的一部分差距。阅读指南：蓝线（加补丁）处于舍入误差水平，远低于橙线（无补丁）；"
                     "σ₂/σ₁ 接近 1e-7 说明秩为一。",
    "rank1.layer": "要细看的层",
    "rank1.run": "运行秩一检验",
    "rank1.error": "每层的恒等式误差",
    "rank1.sv": "ΔW 的奇异值",
    "rank1.norms": "随示例增加的 |ΔW|",
    "rank1.transfer": "迁移到其他查询",
    "rank1.download": "下载这个结果（JSON）",
    "rank1.file": "秩一报告",
    "rank1.empty": "运行秩一检验，或选择一个内置任务查看预先提供的结果",
    "rank1.progress": "秩一检验",
    "evaluate.tab": "评测",
    "evaluate.explain": "在任务的一个固定种子留出集上给各方法打分；延迟在同一次运行中测量（先做一次不计时的预热），"
                        "所以比值是公平的。需要从示例中学习的方法在训练集上构建。阅读指南：先一眼比较准确率"
                        "（柱上的须线是 95% 区间），再看逐条表格里两种方法意见不一的地方，以及检验两者差异"
                        "是否超出偶然的配对检验。",
    "evaluate.methods": "方法",
    "evaluate.run": "评测",
    "evaluate.results": "结果",
    "evaluate.plot": "各方法的准确率",
    "evaluate.export": "下载结果（JSON、CSV）",
    "evaluate.json": "JSON 格式的结果（与命令行的 --json 相同）",
    "evaluate.csv": "CSV 格式的结果",
    "evaluate.items": "逐条结果（✓ 正确，✗ 错误）",
    "evaluate.compare": "比较",
    "evaluate.with": "与",
    "evaluate.only": "只有其中一种方法答对的条目",
    "evaluate.empty": "点击“评测”（内置任务会显示预先提供的结果）",
    "evaluate.evaluating": "正在评测",
    "evaluate.both_needed": "_{a} 和 {b} 都必须参加本次运行并能完成该任务_",
    "evaluate.split": "都答对 **{both}** 条，都答错 **{neither}** 条，只有 **{a}** 答对 **{n_a}** 条，只有 **{b}** "
                      "答对 **{n_b}** 条，共 {n} 条",
    "evaluate.paired": "{a} − {b}：**{diff:+.3f}**（95% 区间 {lo:+.3f} 至 {hi:+.3f}）；对只有一方答对的条目做精确 "
                       "McNemar 检验：p = {p:.3g}，{verdict}",
    "evaluate.significant": "检验支持这一差异（p < 0.05）",
    "evaluate.not_significant": "**不显著**（p ≥ 0.05）：两者意见不一的条目按这种方式分布可能只是偶然",
    "rank1.no_update": "第 {layers} 层：没有更新（ΔW = 0，σ₂/σ₁ 无定义）。在这些层，上下文不改变查询处 MLP 的输入，"
                       "因此没有可由权重更新承载的变化；在 GPT-NeoX 的并行块中，MLP 读取的是块的输入，而在第一层它"
                       "只是查询词元自身的嵌入。",
    # 图：标题、坐标轴、图例和悬停文字
    "fig.accuracy": "准确率",
    "fig.val_accuracy": "验证准确率",
    "fig.first_token_accuracy": "首词元准确率",
    "fig.gold_probability": "正确标签的平均概率",
    "fig.zero_shot_at": "零样本 {acc:.2f}",
    "fig.method": "方法",
    "fig.head": "注意力头",
    "fig.head_n": "第 {head} 个注意力头",
    "fig.layer_head_value": "第 %{{y}} 层，第 %{{x}} 个注意力头<br>{value} = %{{z:.3f}}",
    "fig.na": "无",
    "fig.eval.title": "{task}：在 {n} 条留出查询上的准确率",
    "fig.eval.bar": "{accuracy:.2f} · {ratio:.2f} 倍用时",
    "fig.eval.hover": "%{{x}}：准确率 %{{y:.3f}}（95% 区间 %{{customdata[0]:.3f}}–%{{customdata[1]:.3f}}）",
    "fig.site.title": "SITE 在 {task} 上选出的注意力头：平均 α {mean:.2f}，{binary:.0%} 的头接近 0 或 1",
    "fig.icr.title": "{map}{of}，查询：{query}",
    "fig.icr.mean_of": "（{n} 个路由器的平均）",
    "fig.icr.alpha_hover": "第 %{{y}} 层，方向 %{{x}}<br>α = %{{z:.3f}}",
    "fig.icr.direction": "上下文学习主方向",
    "fig.fv.title": "{task} 的函数向量：每个注意力头的间接效应，框出前 {k} 个（加在第 {layer} 个块之后）",
    "fig.fv.aie": "AIE（平均间接效应）",
    "fig.fv.top": "前 {k} 个",
    "fig.fv.hover": "第 %{{y}} 层，第 %{{x}} 个注意力头：属于函数向量",
    "fig.tv.title": "{task} 的任务向量：每个块在 {n} 个留出样本上的准确率",
    "fig.tv.name": "任务向量",
    "fig.tv.hover": "第 %{{x}} 个块<br>准确率 %{{y:.2f}}<br>正确标签的平均概率 %{{customdata:.3f}}",
    "fig.tv.chosen": "选中：第 {layer} 个块",
    "fig.tv.block": "在最后一个词元处替换其输出的块",
    "fig.tv.accuracy": "验证准确率（首个词元）",
    "fig.ltv.title": "{task} 的学习任务向量：每个尝试的块训练一个向量，在 {n} 个留出样本上评分",
    "fig.ltv.sweep": "每个块的留出准确率",
    "fig.ltv.norms": "向量与残差流的范数",
    "fig.ltv.name": "学习任务向量",
    "fig.ltv.hover": "第 %{{x}} 个块<br>准确率 %{{y:.2f}}<br>留出损失 %{{customdata:.3f}}",
    "fig.ltv.chosen": "选中：第 {layer} 个块",
    "fig.ltv.block": "在最后一个词元处向其输出加入向量的块",
    "fig.ltv.accuracy": "留出准确率",
    "fig.ltv.vector": "学到的 ‖v‖",
    "fig.ltv.residual": "残差流的平均 ‖h‖",
    "fig.ltv.norm": "范数",
    "fig.ltv.norm_hover": "第 %{{x}} 个块<br>{name}：%{{y:.2f}}",
    "fig.i2cl.title": "{task} 的 I2CL 系数：校准损失 {zero_shot:.3f}（零样本）→ {init:.3f}（初始化）→ "
                      "{calibrated:.3f}（{steps} 步）",
    "fig.i2cl.lambda": "λ：上下文向量的权重",
    "fig.i2cl.beta": "β：查询自身输出的权重",
    "fig.i2cl.lambda_axis": "λ（上下文）",
    "fig.i2cl.beta_axis": "β（查询）",
    "fig.i2cl.attention": "注意力",
    "fig.i2cl.mlp": "MLP（前馈层）",
    "fig.i2cl.hover": "第 %{{x}} 层<br>{name} = %{{y:.3f}}<br>|v| = %{{customdata:.2f}}",
    "fig.icv.title": "{task} 上 ICV 强度的扫描，{n} 个验证样本（{direction}，{site} 输出）",
    "fig.icv.hover": "λ = %{{x}}<br>准确率 %{{y:.3f}}<br>{tiebreak} %{{customdata:.3f}}",
    "fig.icv.chosen": "选中的 λ = {strength:g}",
    "fig.icv.chosen_hover": "选中的 λ = %{{x}}<br>准确率 %{{y:.3f}}",
    "fig.icv.strength": "λ（强度）",
    "fig.lora.title": "{task} 上的 LoRA：在 {n_fit} 个样本上训练 {steps} 步，在 {n_val} 个样本上验证",
    "fig.lora.train_loss": "训练损失（批次）",
    "fig.lora.train_hover": "第 %{{x}} 步<br>损失 %{{y:.3f}}",
    "fig.lora.val_loss": "验证损失",
    "fig.lora.val_loss_hover": "第 %{{x}} 步<br>验证损失 %{{y:.3f}}",
    "fig.lora.val_accuracy_hover": "第 %{{x}} 步<br>验证准确率 %{{y:.0%}}",
    "fig.lora.kept": "保留：第 {step} 步",
    "fig.lora.step": "训练步数",
    "fig.lora.loss": "答案词元的交叉熵",
    "fig.lora.lora": "LoRA（微调）",
    "fig.lora.site": "SITE（隐式上下文学习）",
    "fig.lora.params": "训练参数量",
    "fig.lora.params_alone": "训练参数量（构建 SITE 以作比较）",
    "fig.lora.params_hover": "%{{x}}<br>训练参数 %{{y:,}} 个",
    "fig.lora.params_log": "训练参数量（对数刻度）",
    "fig.flow.title": "信息流：{task}，模型 {model}（{n} 个提示，约 {tokens:.0f} 个词元）",
    "fig.flow.facts": "前 {third} 层：S_wp {wp_shallow:.2f}，S_pq {pq_shallow:.2f}；后 {third} 层：S_wp {wp_deep:.2f}，"
                      "S_pq {pq_deep:.2f}；{n} 层中有 {lead} 层 S_pq > S_wp",
    "fig.flow.since": "，从第 {since} 层起每一层都是如此",
    "fig.flow.wp": "文本 → 标签词（S_wp）",
    "fig.flow.pq": "标签词 → 目标位置（S_pq）",
    "fig.flow.ww": "其他位置对（S_ww）",
    "fig.flow.hover": "第 %{{x}} 层：{flow} 占比 %{{y:.3f}}",
    "fig.flow.share": "占该层信息流的比例",
    "fig.flow.arcs_title": "第 {layer} 层的锚点信息流，{which}",
    "fig.flow.guide": "读法：蓝色连线把示例的文本汇入它的标签词（浅层较强）；红色连线把标签词汇入答案位置（深层较强）。"
                      "线越宽，显著性越高。",
    "fig.flow.link": "{src} → {dst}：I = {value:.3g}（为最强连线的 {share:.0%}）",
    "fig.flow.token": "第 {i} 个词元：{token}（{role}）",
    "fig.role.target": "目标位置",
    "fig.role.label_word": "标签词",
    "fig.role.format": "格式",
    "fig.role.text": "文本",
    "fig.iso.title": "注意力隔离：切断标签词（对照：随机词元）与前文的联系",
    "fig.iso.none": "不隔离",
    "fig.iso.label_words": "标签词",
    "fig.iso.random": "随机词元",
    "fig.iso.first": "{name}，前 {k} 层",
    "fig.iso.last": "{name}，后 {k} 层",
    "fig.label_loyalty": "标签忠实度",
    "fig.loyalty": "忠实度",
    "fig.rw.title": "锚点重加权",
    "fig.rw.before": "上下文学习（每类 1 个示例）",
    "fig.rw.after": "+ 锚点重加权",
    "fig.comp.title": "隐藏锚点压缩：{task}（n={n}，示例共 {tokens} 个词元）",
    "fig.comp.quality": "质量",
    "fig.comp.speedup_title": "相对完整少样本的加速",
    "fig.comp.speedup": "加速比",
    "fig.comp.bar": "{speedup:.2f} 倍，{tokens} 个词元",
    "fig.comp.full": "完整少样本",
    "fig.comp.full_cache": "完整缓存",
    "fig.comp.anchors_cache": "仅缓存锚点",
    "fig.conf.title": "锚点混淆诊断：{task}（标签对相关系数 {corr}）",
    "fig.conf.closeness": "锚点相近度，第 {layer} 层",
    "fig.conf.confusion": "混淆矩阵（准确率 {accuracy:.2f}）",
    "fig.conf.predicted": "预测标签",
    "fig.r1.sv_title": "ΔW 的奇异值，第 {layer} 层（{task}，{model}）",
    "fig.r1.no_update": "无更新：ΔW = 0",
    "fig.r1.sv": "奇异值",
    "fig.r1.value": "数值（对数）",
    "fig.r1.norm_title": "随示例增加补丁的大小，第 {layer} 层",
    "fig.r1.demos": "提示中的示例数",
    "fig.r1.norm_w": "ΔW 的 Frobenius 范数",
    "fig.r1.norm_h": "Δh 的范数",
    "fig.r1.error_title": "秩一恒等式：查询处的最大绝对误差（{task}，{model}）",
    "fig.r1.patched": "打补丁的块 vs 带上下文",
    "fig.r1.unpatched": "未打补丁的块 vs 带上下文",
    "fig.r1.hover": "第 %{{x}} 层：%{{y:.2e}}（%{{customdata:.1f}} ulp）",
    "fig.r1.tolerance": "容差 {tolerance:g}",
    "fig.r1.error": "最大绝对误差（对数）",
    "fig.r1.transfer_title": "补丁能迁移吗？{n} 个其他查询上的平均",
    "fig.r1.own": "自身的补丁",
    "fig.r1.main": "主查询的补丁",
    "fig.r1.none": "不打补丁",
    "fig.r1.transfer_error": "与带上下文输出之间的最大绝对误差（对数）",
    # 评测表格的列名（下载的 CSV 与之相同）
    "evaluate.col.method": "方法",
    "evaluate.col.error": "错误",
    "evaluate.col.accuracy": "准确率",
    "evaluate.col.interval": "95% 区间",
    "evaluate.col.vs_zero_shot": "与零样本之差（McNemar p）",
    "evaluate.col.first_token": "首词元准确率",
    "evaluate.col.latency": "延迟（毫秒/查询）",
    "evaluate.col.time_ratio": "相对零样本的用时倍数",
    "evaluate.col.prompt_tokens": "提示词元数",
    "evaluate.col.build_s": "构建用时（秒）",
    "evaluate.col.stored": "存储参数量",
    "evaluate.col.trained": "训练参数量",
    "evaluate.col.input": "输入",
    "evaluate.col.gold": "标准答案",
    "evaluate.col.right": "答对的方法",
    "evaluate.ns": "，不显著",
    "error.task.empty": "{file}：没有找到示例（文件或表格为空）",
    "error.task.no_records": "{file}：没有找到示例",
    "error.task.too_many_rows": "{file}：共 {n} 行，超过了 {max} 行的上限",
    "error.task.blank_rows": "{file}：有 {n} 行的输入或输出为空（第 {rows} 行）",
    "error.task.too_few": "{file}：至少需要 2 个示例，现在只有 {n} 个",
    "error.task.one_label": "{file}：每个示例的标签都是“{label}”；分类任务至少需要两个标签"
                            "（如果这是生成任务，请把任务类型设为 open）",
    "error.task.no_such_column": "没有名为“{want}”的 {role} 列；现有的列是：{columns}",
    "error.task.no_column": "没有找到 {role} 列；请把列命名为 {names} 之一（现有的列：{columns}）",
    "error.task.not_records": "每条记录都必须是带有 input 和 output 字段的对象",
    "error.task.too_big": "{file}：{mb:.1f} MB，超过了 {max} MB 的上限",
    "error.task.not_utf8": "{file}：不是 UTF-8 文本（第 {byte} 个字节）；请把文件另存为 UTF-8",
    "error.task.empty_file": "{file}：文件是空的",
    "error.task.malformed_table": "{file}：{format} 格式有误：{err}",
    "error.task.no_header": "{file}：没有表头行",
    "error.task.extra_fields": "{file}：有些行的字段比表头多",
    "error.task.malformed_json": "{file}：JSON 格式有误（第 {line} 行）：{err}",
    "error.task.malformed_jsonl": "{file}：JSON 格式有误（第 {line} 行）：{err}",
    "error.task.not_a_list": '{file}：JSON 必须是由 {{"input", "output"}} 对象组成的列表',
    "error.task.file_type": "{file}：不支持的文件类型“{ext}”；请使用 .csv、.tsv、.json 或 .jsonl",
    "error.task.no_such_file": "{file}：没有这个文件（内置任务：{names}）",
    "error.task.no_builtin": "没有名为“{name}”的内置任务（内置任务：{names}）",
    "error.task.classification_only": "{file}：锚点分析需要分类任务（标签词）",
    "error.task.empty_folder": "{folder}：这个文件夹里没有任务文件（{suffixes}）",
    "error.task.named_twice": "有不止一个任务名为 {names}：结果按任务名保存",
    "error.spec.unknown": "没有任务规格“hf:{name}”（已有规格：{names}）",
    "error.group.unknown": "没有任务组“{name}”（已有任务组：{names}）",
    "error.spec.bad_yaml": "{file}：无法读取的任务规格：{err}",
    "error.spec.bad_field": "任务规格 {spec}：字段“{field}”{why}",
    "error.spec.no_data": "任务规格 {spec}：没有数据：查找了 {where}：{err}",
    "error.spec.no_split": "任务规格 {spec}：{where} 中没有划分“{split}”（那里的划分：{splits}）",
    "error.spec.empty_split": "任务规格 {spec}：划分“{split}”是空的",
    "error.spec.no_column": "任务规格 {spec}，划分“{split}”：它的 {field} 需要列 {column}，数据中没有（列：{columns}）",
    "error.spec.label_outside": "任务规格 {spec}，划分“{split}”：标签值 {values} 不在标签词表中（{labels}）",
    "error.label.no_tokens": "标签“{label}”分词后为空",
    "error.label.same_tokens": "标签“{a}”和“{b}”分词后是相同的词元，模型无法区分它们；请重命名其中一个",
    "error.prompt.no_chat_template": "模型 {model} 没有对话模板，无法以对话格式提示；"
                                     "请使用 --prompt-format plain（prompt_format=\"plain\"）",
    "error.prompt.other_format": "这个{what}是在 {built} 格式的提示上得到的，而本次运行要求 {asked} 格式的提示；"
                                 "请用 --prompt-format {built} 运行",
    "error.label.site_first_token": "SITE 的首词元目标无法区分第一个词元相同的标签；请使用整个答案的目标"
                                    "（--site-objective answer），或重命名一个标签",
    "error.label.anchors_first_token": "锚点分析只看答案的第一个词元，而有两个标签的第一个词元相同；请重命名标签，"
                                       "使它们的第一个词元不同",
    "error.label.unmatched": "有个示例的标签没有对应到任何词元；标签是空的吗？",
    "error.artefact.unreadable": "{file}：不是可读取的 ICL Lab 文件：{err}",
    "error.artefact.corrupted": "{file}：不是可读取的 ICL Lab 文件（损坏或被截断？）：{err}",
    "error.artefact.not_ours": "{file}：不是 ICL Lab 文件",
    "error.artefact.old_format": "{file}：不是 ICL Lab 文件（格式为 {found!r}，应为 {expected!r}）；"
                                 "旧版本的文件需要重新构建",
    "error.artefact.no_such_file": "{file}：没有这个文件",
    "error.artefact.other_kind": "{file}：这是 {found!r} 文件，不是 {kind!r} 文件",
    "error.artefact.unknown_kind": "{file}：这是 {kind!r} 文件，没有已注册的方法能读取它",
    "error.artefact.checksum": "{file}：张量数据与校验和不符（文件已损坏）",
    "error.artefact.bad_meta": "{file}：元数据无法读取：{err}",
    "error.artefact.not_json": "{file} 含有 {constant}，这不是合法的 JSON；请重新写入（用 null，不要用 NaN）",
    "error.artefact.other_model": "{file} 是为模型 {found} 制作的，不是当前加载的 {loaded}；请为这个模型重新构建",
    "error.artefact.inconsistent": "{file}：{what} 文件不完整或前后不一致：{err}",
    "error.artefact.built_for_other_model": "这个 {what} 是为模型 {found}{found_shapes} 构建的，但当前加载的模型是 "
                                            "{loaded}{loaded_shapes}；请为这个模型重新构建",
    "error.artefact.trained_for_other_model": "这个 {what} 是在模型 {found}{found_shapes} 上训练的，但当前加载的模型是 "
                                              "{loaded}{loaded_shapes}；请为这个模型重新训练",
    "error.lora.tensors_mismatch": "适配器的张量与这个模型的层不匹配（{n} 个张量，应为 {expected} 个）",
    "error.lora.config_fields": "LoRA 配置不可用：{fields} 缺失或类型不对",
    "error.lora.config": "LoRA 配置不可用：{err}",
    "error.lora.config_settings": "LoRA 配置含有 ICL Lab 不使用的设置：{settings}",
    "error.peft.pickle": "{folder}：适配器的权重在 adapter_model.bin 中，这是 pickle 文件，ICL Lab 从不加载；请保存为 "
                         "adapter_model.safetensors（peft 的 save_pretrained 默认如此）",
    "error.peft.no_weights": "{folder}：adapter_config.json 旁边没有 adapter_model.safetensors",
    "error.peft.bad_config": "{folder}：adapter_config.json 不是可读取的 JSON 对象：{err}",
    "error.peft.not_lora": "{folder}：这是 {peft_type} 适配器；ICL Lab 只读取 LoRA 适配器",
    "error.peft.tensor": "{folder}：张量 {name} 不是 LoRA 的 A 或 B 权重（嵌入层适配器、DoRA 幅度、"
                         "另存的模块和偏置都无法应用）",
    "error.peft.unpaired": "{folder}：{module} 有 lora_A 却没有对应的 lora_B，或者反过来",
    "error.peft.no_module": "{folder}：适配器修改的 {module} 在模型 {model} 中不存在：它是为另一个基础模型制作的",
    "error.peft.module_type": "{folder}：适配器修改的 {module} 是 {type}；ICL Lab 的 LoRA 只作用于线性层",
    "error.peft.shape": "{folder}：{tensor} 的形状是 {found}，但模型 {model} 的 {module} 需要 {expected}："
                        "适配器是为另一个基础模型或另一个秩制作的",
    "error.export.unknown_format": "没有导出格式 '{format}'；可用格式：{formats}",
    "error.export.not_peft": "{method} 无法写成 PEFT 适配器：PEFT 适配器保存的是 LoRA 权重，只有 {methods} 训练这种权重"
                             "（见 docs/elsewhere.md）",
    "error.export.not_control_vector": "{method} 无法写成 llama.cpp 控制向量：llama.cpp 在某个块之后、"
                                       "在每个位置和每个生成的词元上向残差流加上同一个固定向量，而 {method} "
                                       "以别的方式改变模型（有此导出的方法：{methods}；docs/elsewhere.md "
                                       "说明每个方法改变的是什么）",
    "error.icr.no_folder": "ICR 路由器文件夹 {folder}：没有这个文件夹",
    "error.icr.not_in_folder": "文件夹 {folder} 中没有模型 {model} 的 ICR 路由器（其中的路由器：{there}）；可以用 "
                               "`{command}` 训练一个",
    "error.icr.not_shipped": "模型“{model}”没有随应用提供预训练的 ICR 路由器（已提供的模型：{shipped}）；可以用 "
                             "`{command}` 训练一个，再用 --icr-router 或 $ICL_LAB_ROUTERS 指向它的文件夹（或存放多个"
                             "路由器的文件夹）",
    "error.model.needs_offload": "{name} 的设备映射会把权重放到磁盘上；请加上 --offload-folder DIR",
    "error.model.not_builtin": "“{name}”不是内置模型；内置模型：{builtin}",
    "error.model.not_installed": "模型“{name}”没有安装（{err}），且无法连接到模型仓库；请这样安装：{hint}",
    "error.model.unknown": "未知的模型“{name}”：既不是内置模型名、.gguf 文件，也不是本地检查点文件夹或可访问的仓库 ID。"
                           "内置模型：{builtin}",
    "error.model.no_such_gguf": "{file}：没有这个 GGUF 文件",
    "error.model.bad_gguf": "{file}：transformers 无法读取并反量化这个 GGUF 文件（文件被截断、已损坏，"
                            "或是它不转换的架构）：{err}",
    "error.model.kernel": "未知的注意力内核“{kernel}”：ICL Lab 运行自己的注意力函数，它调用以下之一：{kernels}",
    "error.model.quantization": "未知的量化方式“{quantization}”；应为以下之一：{known}",
    "error.model.quantized": "{what} 无法在以 {quantization} 量化加载的模型上运行：{why}；去掉 --quantization "
                             "重新加载模型即可运行它",
    "error.model.no_bitsandbytes": "--quantization {quantization} 需要 bitsandbytes；请这样安装：{install}",
    "error.model.unsupported": "ICL Lab 不认识“{model_type}”架构；支持的模型家族：{families}",
    "error.model.too_large": "模型 {name} 在 {dtype} 下需要在设备 {device} 上占用 {need}（共 {total}，按配置估算），"
                             "但那里只有 {limit} 可用。能让它放得下的参数：{flags}",
    "error.model.too_large_all": "模型 {name} 在 {dtype} 下需要在允许的设备上占用 {need}（共 {total}，按配置估算），"
                                 "但那里只有 {limit} 可用。能让它放得下的参数：{flags}",
    # ELICIT（方法名、标签页、图和摘要）
    "method.elicit": "ELICIT（能力库）",
    "download.elicit": "下载这个 ELICIT 方法（safetensors）",
    "elicit.tab": "ELICIT 能力库",
    "elicit.explain": "ELICIT 保存一个用其他任务一次性建好的能力库：每个任务一项，记录少样本提示"
                      "在某一个块之后、最后一个词元处留下的状态（在 16 个示例的提示上取平均，"
                      "块在留出的查询上选出），以及这些提示本身。一个训练好的小型检索器把每个查询"
                      "和每一项的提示比较；得分最高那一项的向量乘以强度，加到查询在该项的块处"
                      "最后一个词元的状态上。最高得分低于阈值的查询什么也不加，按零样本回答。"
                      "不从这个任务的示例中学习任何东西。",
    "elicit.figure": "检索器为每个查询选中的库项及其得分",
    "elicit.summary": "**{task}** 上的 ELICIT：能力库共 {n_entries} 项；{n} 个查询中有 {injected} 个加了向量"
                      "（阈值 {threshold:.3f}，召回率 {recall}）；选中最多的：{top}（{count} 次）；强度 {strength}",
    "fig.elicit.title": "{task} 上的 ELICIT：检索器为 {n} 个查询选出的最佳库项",
    "fig.elicit.declined": "{entry}（未注入）",
    "fig.elicit.hover": "第 %{{x}} 个查询：%{{text}}<br>{entry}：得分 %{{y:.3f}}",
    "fig.elicit.threshold": "阈值 {threshold:.3f}（召回率 {recall}）",
    "fig.elicit.query": "任务的查询",
    "fig.elicit.score": "最佳库项的检索得分",
    "error.elicit.not_shipped": "模型“{model}”没有随应用提供 ELICIT 能力库（已提供的模型：{shipped}）；可以用 "
                                "`{command}` 构建一个，再用 --elicit-library 指向它",
}

STRINGS = {"en": EN, "zh-CN": ZH}
