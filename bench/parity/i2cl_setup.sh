#!/usr/bin/env bash
# I2CL's authors' code (LzVv123456/I2CL) at a pinned commit, in a virtual environment of its own, with the three
# changes it needs to run here on ICL Lab's model (bench/parity/README.md says why each is needed). The data and the
# prompt template need no change to their code: i2cl_authors.py hands their pipeline a dataset class of their own
# kind (a `BaseTask` over the handed-over records, with ICL Lab's template) and their config with ICL Lab's
# example separator.
#   bench/parity/i2cl_setup.sh $PARITY_SRC/I2CL   (clones at their pinned commits: bench/parity/README.md)
set -euo pipefail
COMMIT=c2c6dd95bdaabf421fd390795576181b22a78287  # LzVv123456/I2CL, 2024-05-24, the newest
REPO=${1:?usage: i2cl_setup.sh CLONE_OF_I2CL}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_I2CL_VENV:-$PARITY_SRC/venvs/parity-i2cl}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files

archive "$REPO" "$COMMIT" "$SRC/i2cl"

patch() {  # patch FILE SED_EXPR EXPECTED: apply, then check that EXPECTED is now in FILE
  sed -i "$2" "$SRC/i2cl/$1"
  grep -qF "$3" "$SRC/i2cl/$1" || { echo "patch did not apply to $1: $2" >&2; exit 1; }
}
# 1. CPU: set_device falls back to the CPU but then calls torch.cuda.set_device on it, which raises.
patch utils.py 's|    torch.cuda.set_device(device)|    if device.type == "cuda": torch.cuda.set_device(device)|' \
  'if device.type == "cuda": torch.cuda.set_device(device)'
# 2. The model: get_model_wrapper knows hub names with 'llama' or 'gpt' in them; SmolLM2 is a Llama
#    (LlamaForCausalLM: model.layers.{i}.self_attn / .mlp), so a local checkpoint named smollm2 takes LlamaWrapper.
patch utils.py "s|    if 'llama' in model_name:|    if 'llama' in model_name or 'smollm2' in model_name.lower():|" \
  "'smollm2' in model_name.lower()"
# 3. The label tokens: they add the space the answer follows the prompt with ("Sentiment: positive") only for
#    tokenizers whose class names GPT; Llama-2's SentencePiece adds it by itself. SmolLM2's byte-level BPE,
#    loaded by transformers 4.x as PreTrainedTokenizerFast, does not, so without this their label token would be
#    'positive' where the text has ' positive' (the token ICL Lab scores). Same rule in training and evaluation.
for f in wrapper.py evaluator.py; do
  patch "$f" "s|if 'gpt' in \(self\.\)\{0,1\}tokenizer\.__class__\.__name__\.lower():|if any(k in \1tokenizer.__class__.__name__.lower() for k in ('gpt', 'pretrainedtokenizerfast')):|" \
    "for k in ('gpt', 'pretrainedtokenizerfast')"
done
[ "$(grep -c "'pretrainedtokenizerfast'" "$SRC/i2cl/wrapper.py")" = 2 ] \
  || { echo "patch 3 did not apply to both label maps of wrapper.py" >&2; exit 1; }

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# Their requirements.txt pins transformers 4.37.2, whose tokenizers (0.15) predates 0.20, the first that reads the
# model's tokenizer.json (tv_setup.sh found 0.19 cannot). 4.46.3 reads it, still hands back the tuple-of-tuples KV
# cache their few-shot baseline repeats (`t.repeat(...) for t in tup`), and has the Llama module layout their
# wrapper hooks (model.layers.{i}.self_attn / .mlp). peft, imported by wrapper.py for their soft-prompt baseline and
# unused by I2CL: 0.13.2, of transformers 4.46's time (their 0.8.2 predates it). accelerate: 0.30.1, as in the
# task-vector environment (their code never imports it). Their pins where they install beside these: datasets
# 2.16.1 (my_datasets imports it; nothing here calls it) with pyarrow 15.0.0, of its time (the newest pyarrow needs
# numpy 2); matplotlib 3.8.4 (their loss-curve plot); numpy 1.26.4 (theirs is a conda build of 1.26.3).
"$VENV/bin/pip" install -q transformers==4.46.3 accelerate==0.30.1 peft==0.13.2 datasets==2.16.1 pyarrow==15.0.0 \
  matplotlib==3.8.4 numpy==1.26.4 safetensors
"$VENV/bin/python" -c "import peft, datasets, transformers; print('I2CL authors env ready:', transformers.__version__)"
