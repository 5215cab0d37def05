"""LoRA training: AdamW on the adapter alone, cross-entropy on the answer tokens, early stop on held-out loss.

Each example is its zero-shot prompt followed by the answer text `" y"`, tokenised exactly as the label scorer
tokenises it (the prompt with special tokens, then the answer on its own), so the tokens the loss rewards are
the tokens evaluation reads. Batches are left-padded like every runner's, so the answer tokens are the last
ones of each row and only those positions go through the output head (`logits_to_keep`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from peft import PeftModel
from peft.tuners.lora import LoraLayer

from icr_app.core.models import LoadedModel
from icr_app.core.progress import Progress, no_progress
from icr_app.core.scoring import pad_left
from icr_app.core.tasks import Example
from icr_app.methods.base import Method, is_correct
from icr_app.methods.lora.config import LoraConfig


class AnswerSet:
    """Examples as token ids (prompt + answer) with each answer's length."""

    def __init__(self, lm: LoadedModel, method: Method, examples: list[Example]) -> None:
        self.lm, self.method, self.examples = lm, method, examples
        prompts = lm.tokenizer([method.prompt(e.input) for e in examples], add_special_tokens=True)["input_ids"]
        answers = lm.tokenizer([method.template.answer_text(e.output) for e in examples],
                               add_special_tokens=False)["input_ids"]
        self.ids = [p + a for p, a in zip(prompts, answers)]
        self.n_answer = [len(a) for a in answers]

    def __len__(self) -> int:
        return len(self.ids)

    def loss(self, rows: list[int]) -> tuple[torch.Tensor, int]:
        """Summed cross-entropy over the answer tokens of `rows`, and how many tokens that is."""
        enc = pad_left(self.lm, [self.ids[i] for i in rows])
        k = max(self.n_answer[i] for i in rows)
        out = self.lm.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask,
                            position_ids=enc.position_ids, use_cache=False, logits_to_keep=k + 1)
        logits = out.logits[:, :-1].float()  # position t predicts token t + 1: the last k tokens
        targets = enc.input_ids[:, -k:]
        n_answer = torch.tensor([self.n_answer[i] for i in rows], device=targets.device)
        keep = torch.arange(k, device=targets.device)[None, :] >= (k - n_answer)[:, None]
        ce = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none").view_as(targets)
        return (ce * keep).sum(), int(keep.sum())

    @torch.no_grad()
    def evaluate(self, batch_size: int) -> tuple[float, float]:
        """(mean answer-token loss, accuracy as evaluation scores it: label argmax, or generated prefix match)."""
        total, count = 0.0, 0
        for s in range(0, len(self), batch_size):
            loss, n = self.loss(list(range(s, min(s + batch_size, len(self)))))
            total, count = total + float(loss), count + n
        preds = self.method.predict([e.input for e in self.examples], batch_size=batch_size)
        return total / count, sum(is_correct(p, e.output) for p, e in zip(preds, self.examples)) / len(self)


@dataclass
class Curve:
    """What the training did, for its figure: the loss of every step, and each validation's loss and accuracy."""

    train_loss: list[float] = field(default_factory=list)
    val_step: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    val_accuracy: list[float] = field(default_factory=list)
    best_step: int = 0

    def record(self, step: int, loss: float, accuracy: float) -> None:
        self.val_step.append(step)
        self.val_loss.append(loss)
        self.val_accuracy.append(accuracy)


def set_dropout(model: PeftModel, active: bool) -> None:
    """LoRA's own dropout on or off; the base model stays in eval mode throughout, as it answers."""
    for module in model.modules():
        if isinstance(module, LoraLayer):
            module.lora_dropout.train(active)


def train_adapter(peft_model: PeftModel, fit: AnswerSet, val: AnswerSet, settings: LoraConfig, seed: int,
                  progress: Progress = no_progress) -> Curve:
    """Train the adapter's parameters in place; they end at the validation with the lowest loss (step 0, the
    untrained adapter, included), after stopping once `patience` validations in a row did not improve it."""
    s = settings
    params = {name: p for name, p in peft_model.named_parameters() if p.requires_grad}
    opt = torch.optim.AdamW(params.values(), lr=s.lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    curve = Curve()
    best_loss, acc = val.evaluate(s.batch_size)
    curve.record(0, best_loss, acc)
    best = {name: p.detach().clone() for name, p in params.items()}
    since_best = 0
    for step in progress(range(1, s.steps + 1), desc="LoRA: training"):
        rows = torch.randperm(len(fit), generator=gen)[:s.batch_size].tolist()
        set_dropout(peft_model, True)
        loss, n = fit.loss(rows)
        loss = loss / n
        opt.zero_grad()
        loss.backward()
        opt.step()
        set_dropout(peft_model, False)
        curve.train_loss.append(float(loss.detach()))
        if step % s.eval_every and step != s.steps:
            continue
        vl, acc = val.evaluate(s.batch_size)
        curve.record(step, vl, acc)
        if vl < best_loss:
            best_loss, curve.best_step, since_best = vl, step, 0
            best = {name: p.detach().clone() for name, p in params.items()}
        else:
            since_best += 1
            if since_best >= s.patience:
                break
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(best[name])
    return curve
