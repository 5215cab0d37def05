"""Saliency information flow: which token pairs the label decision flows through, layer by layer.

A custom attention keeps each layer's post-softmax weights `A`; autograd gives `∂L/∂A` directly, and
`I_l = |Σ_h A_h ⊙ ∂L/∂A_h|` (this folder's README.md; equal to the gradient of a ones tensor `P` multiplied into `A`,
without the extra products). The embeddings require grad only so that layer 0's `A` is in the graph.
`L` is the cross-entropy of the gold label over the label words' first-token logits at the final
position. Three averages of `I_l` summarise a layer: text → label words (S_wp), label words → target
(S_pq), all other causal pairs (S_ww).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch

from icr_app.analyses.anchors.prompt import AnchorPrompt, first_label_ids, label_loss, sample_prompts
from icr_app.core.attention import attend, attention_weights
from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.prompts import Template
from icr_app.core.tasks import Task, split

FLOWS = ("S_wp", "S_pq", "S_ww")


def head_saliency(lm: LoadedModel, prompt: AnchorPrompt, label_ids: torch.Tensor, target: int) -> torch.Tensor:
    """`A_h ⊙ ∂L/∂A_h` for every layer and head, (L, H, T, T), signed: one forward and one backward pass."""
    weights: dict[int, torch.Tensor] = {}

    def saliency_attention(module, query, key, value, attention_mask, scaling=None, **_):
        # A and ∂L/∂A in fp32 whatever the model's dtype: in bf16 their product loses the small flows.
        weights[module.layer_idx] = attention_weights(query.float(), key.float(), attention_mask, scaling)
        return attend(weights[module.layer_idx], value.float()).to(query.dtype), None

    ids = torch.tensor([prompt.input_ids], device=lm.device)
    with lm.lock, torch.enable_grad():
        embeds = lm.model.get_input_embeddings()(ids).requires_grad_(True)
        logits = lm.model(inputs_embeds=embeds, logits_to_keep=1, attention_edit=saliency_attention).logits[:, -1]
        loss = label_loss(logits, label_ids, torch.tensor([target], device=lm.device))
        a = [weights[i] for i in range(lm.n_layers)]
        grads = torch.autograd.grad(loss, a)
    return torch.stack([(w[0] * g[0]).to(lm.device) for w, g in zip(a, grads)]).detach()  # layers may be spread


def saliency(lm: LoadedModel, prompt: AnchorPrompt, label_ids: torch.Tensor, target: int) -> torch.Tensor:
    """`I_l(i, j) = |Σ_h A_h ⊙ ∂L/∂A_h|` for every layer, (L, T, T) (the absolute value outside the head sum)."""
    return head_saliency(lm, prompt, label_ids, target).sum(1).abs()


def prompt_saliency(lm: LoadedModel, prompt: AnchorPrompt, labels: list[str], per_head: bool = False) -> torch.Tensor:
    """`saliency` (or, per_head, `head_saliency`) for one prompt of a task with these labels, the gold label being
    the query's."""
    fn = head_saliency if per_head else saliency
    return fn(lm, prompt, first_label_ids(lm, labels, prompt.template), labels.index(prompt.query.output))


def position_sets(prompt: AnchorPrompt) -> dict[str, torch.Tensor]:
    """Boolean (T, T) masks of the (i, j) pairs each flow averages over; ww = every other pair with j < i."""
    n = len(prompt)
    causal = torch.ones(n, n, dtype=torch.bool).tril(-1)
    is_label = torch.zeros(n, dtype=torch.bool)
    is_label[prompt.label_positions] = True
    wp = causal & is_label[:, None]
    pq = torch.zeros(n, n, dtype=torch.bool)
    pq[prompt.target] = is_label
    return {"S_wp": wp, "S_pq": pq, "S_ww": causal & ~wp & ~pq}


def flow_scores(flow: torch.Tensor, prompt: AnchorPrompt) -> dict[str, torch.Tensor]:
    """Per-layer mean of `I_l` over each position set, (L,) each."""
    out = {}
    for name, mask in position_sets(prompt).items():
        mask = mask.to(flow.device)
        out[name] = (flow * mask).sum((-1, -2)) / mask.sum().clamp(min=1)
    return out


@dataclass
class FlowResult:
    """Flows per layer averaged over prompts (raw means; `normalised` rescales each layer to sum to 1)."""

    task: str
    model: str
    n_prompts: int
    mean_tokens: float
    seconds_per_prompt: float
    raw: dict[str, list[float]]

    def normalised(self) -> dict[str, list[float]]:
        totals = [sum(v) for v in zip(*(self.raw[k] for k in FLOWS))]
        return {k: [x / t if t else 0.0 for x, t in zip(self.raw[k], totals)] for k in FLOWS}

    def to_json(self) -> dict:
        return {**self.normalised(), **asdict(self)}


def task_prompts(
    lm: LoadedModel, task: Task, n: int, shots: int | None, seed: int, template: Template | None = None
) -> list[AnchorPrompt]:
    """n prompts for held-out queries, demonstrations from the rest of the task."""
    train, test = split(task, n, seed, min_train=max(2, shots or len(task.labels)))
    return sample_prompts(lm, train, list(test.examples), template or Template(), shots, seed)


def information_flow(
    lm: LoadedModel, task: Task, prompts: list[AnchorPrompt], progress: Progress = no_progress,
    keep: Callable[[AnchorPrompt, torch.Tensor], None] | None = None,
) -> FlowResult:
    """Average S_wp, S_pq, S_ww over the prompts (each prompt: one forward + backward pass).

    `keep(prompt, saliency)` sees each prompt's per-head saliency (L, H, T, T), so a figure can reuse one without
    computing it again.
    """
    sums = {k: torch.zeros(lm.n_layers) for k in FLOWS}
    t0 = time.perf_counter()
    for p in progress(prompts, desc="saliency"):
        heads = prompt_saliency(lm, p, task.labels, per_head=True)
        sal = heads.sum(1).abs()
        if keep is not None:
            keep(p, heads)
        scores = flow_scores(sal, p)
        for k in FLOWS:
            sums[k] += scores[k].cpu()
    n = len(prompts)
    return FlowResult(
        task=task.name, model=lm.name, n_prompts=n, mean_tokens=sum(map(len, prompts)) / n,
        seconds_per_prompt=(time.perf_counter() - t0) / n, raw={k: (v / n).tolist() for k, v in sums.items()},
    )


def describe(result: FlowResult) -> str:
    """Where each flow dominates, in words, from the measured curves (no claim beyond them). The CLI prints it; the
    app's flow figure says the same in the visitor's language (`fig.flow.facts` in app/strings.py): change both."""
    f = flow_facts(result)
    return (f"first {f['third']} layers: S_wp {f['wp_shallow']:.2f}, S_pq {f['pq_shallow']:.2f}; "
            f"last {f['third']} layers: S_wp {f['wp_deep']:.2f}, S_pq {f['pq_deep']:.2f}; "
            f"S_pq > S_wp in {f['lead']} of {f['n']} layers"
            + (f", in every layer from {f['since']} on" if f["since"] is not None else ""))


def flow_facts(result: FlowResult) -> dict[str, Any]:
    """The numbers `describe` puts in words (the app's figure says them in the visitor's language): the mean shares
    of S_wp and S_pq over the first and the last third of the layers, in how many layers S_pq leads, and the
    layer from which it leads in every one (None when it never does to the end)."""
    norm = result.normalised()
    n = len(norm["S_wp"])
    third = max(1, n // 3)

    def mean(k: str, layers: range) -> float:
        return sum(norm[k][i] for i in layers) / len(layers)

    shallow, deep = range(third), range(n - third, n)
    lead = [norm["S_pq"][i] > norm["S_wp"][i] for i in range(n)]
    since = next((i for i in range(n) if all(lead[i:])), None)
    return {"third": third, "n": n, "lead": sum(lead), "since": since,
            "wp_shallow": mean("S_wp", shallow), "pq_shallow": mean("S_pq", shallow),
            "wp_deep": mean("S_wp", deep), "pq_deep": mean("S_pq", deep)}
