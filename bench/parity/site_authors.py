"""Run SITE's authors' `eval.py` (set up by site_setup.sh) on one handed-over split and keep what it measured.

    cd $PARITY_SRC/patched/soft_injection && \
        $PARITY_SRC/venvs/parity-site/bin/python <repo>/bench/parity/site_authors.py \
        --model $PARITY_RUN/smollm2-135m --data $PARITY_RUN/data --task sentiment-s0 \
        --out $PARITY_RUN/site/sentiment-s0/authors

Runs in the authors' environment, never in ICL Lab's. Their `eval_site` runs unchanged, with their script's
settings (50 prompts of 10 shots, steps of batch 1 at lr 0.2; 400 steps unless --steps says fewer), seeded (their
code never seeds), in their default scoring (the first answer token's argmax over the vocabulary) and in mode
"both" (zero-shot and SITE). Four of their functions are wrapped to keep what they return, nothing else changed:
the per-item scores, the head weights α, the task embedding, the loaded model. Writes `items.json` (per test item,
in order: SITE's and zero-shot's first-token hit; the probe logits of the first test prompt; the settings) and
`learnt.safetensors` (`alpha` (L, H), `t` (L, H, d_h)).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

STEPS, LR, PROMPTS, SHOTS = 400, 0.2, 50, 10  # eval_scripts/eval_site.sh


def unit_parser(description: str, model: str = "the checkpoint handover.py wrote",
                task: str = "a folder under --data") -> argparse.ArgumentParser:
    """The arguments every authors' runner takes: the model, the handed-over unit, where its results go."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--model", required=True, help=model)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--task", required=True, help=task)
    ap.add_argument("--out", type=Path, required=True)
    return ap


def _recording(fn, store: list):
    def wrapped(*args, **kwargs):
        out = fn(*args, **kwargs)
        store.append(out)
        return out
    return wrapped


def main() -> None:
    ap = unit_parser(__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=STEPS, help="training steps of α (they validate every 50)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path.cwd()))
    import eval as site_eval  # the authors' eval.py, from the current directory

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    shutil.rmtree(args.out, ignore_errors=True)  # their code reuses cached embeddings and α when present
    hits, alphas, means, helpers = [], [], [], []
    site_eval.compute_individual_token_match = _recording(site_eval.compute_individual_token_match, hits)
    site_eval.optimize_head_selection = _recording(site_eval.optimize_head_selection, alphas)
    site_eval.get_last_mean_head_activations = _recording(site_eval.get_last_mean_head_activations, means)
    site_eval.load_model = _recording(site_eval.load_model, helpers)
    run = argparse.Namespace(
        model_name=args.model, data_name="icl", num_example=PROMPTS, num_shot=SHOTS, eval_num_shot=0, max_token=20,
        is_eval=True, result_folder=str(args.out / "result"), cur_mode="both", experiment_name="parity",
        activation_path=str(args.out / "mean_activations"), alphas_path=str(args.out / "alphas" / "alphas.pt"),
        dataset_names=[args.task], lr=LR, epoch=args.steps, batch_size=1, test_batch_size=1, exact_match=False,
        data_path=str(args.data))
    site_eval.eval_site(run)
    # mode "both" scores each item with the injection first, then without (eval.py's loop)
    first = json.loads((args.data / args.task / "test.json").read_text())[0]["input"]
    probe = probe_logits(helpers[0].model, helpers[0].tokenizer, first)
    items = {"site": [bool(h) for h in hits[0::2]], "zero-shot": [bool(h) for h in hits[1::2]], "probe": probe,
             "settings": {k: v for k, v in vars(run).items() if isinstance(v, (int, float, str, bool))}}
    (args.out / "items.json").write_text(json.dumps(items, indent=1))
    save_file({"alpha": alphas[0].detach().float().contiguous(), "t": means[0][:, :, 0].float().contiguous()},
              str(args.out / "learnt.safetensors"))
    print(json.dumps({k: sum(v) / len(v) for k, v in items.items() if k in ("site", "zero-shot")}))


def probe_logits(model, tokenizer, query: str) -> dict:
    """The zero-shot prompt's last-token logits, top 5, to check both sides run the same model on the same text."""
    prompt = f"Input: {query}\nOutput:"
    enc = tokenizer(prompt, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits[0, -1].float()
    top = logits.topk(5)
    return {"prompt": prompt, "ids": top.indices.tolist(), "logits": top.values.tolist(),
            "input_ids": enc.input_ids[0].tolist()}


if __name__ == "__main__":
    main()
