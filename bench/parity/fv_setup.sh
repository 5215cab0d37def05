#!/usr/bin/env bash
# The function vectors' authors' code (ericwtodd/function_vectors) at a pinned commit, in a virtual environment of
# its own, with the few changes it needs to run here on SmolLM2 (bench/parity/README.md says why each is needed).
#   bench/parity/fv_setup.sh $PARITY_SRC/function_vectors $PARITY_SRC/baukit   (clones at their pinned commits: bench/parity/README.md)
set -euo pipefail
COMMIT=fb9eac7b6dc707ea1475a717379916007fe448d5  # ericwtodd/function_vectors, 2026-04-30, the newest
BAUKIT_COMMIT=9d51abd51ebf29769aecc38c4cbef459b731a36e  # davidbau/baukit main, 2024-02-22 (their @main)
REPO=${1:?usage: fv_setup.sh CLONE_OF_function_vectors CLONE_OF_baukit}
BAUKIT=${2:?usage: fv_setup.sh CLONE_OF_function_vectors CLONE_OF_baukit}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_FV_VENV:-$PARITY_SRC/venvs/parity-fv}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files; check FILE PATTERN: the change above it applied
F="$SRC/function_vectors"

# Only src/: nothing here reads their data
archive "$REPO" "$COMMIT" "$F" src LICENSE README.md
archive "$BAUKIT" "$BAUKIT_COMMIT" "$SRC/baukit-fv"


# 1. The model: load_gpt_model_and_tokenizer knows a model by a substring of its name; a local Llama checkpoint
#    named smollm2 takes their Llama path (AutoModelForCausalLM, hooks on model.layers.{l}.self_attn.o_proj).
sed -i "s|    elif 'llama' in model_name.lower():|    elif 'llama' in model_name.lower() or 'smollm2' in model_name.lower():|" \
  "$F/src/utils/model_utils.py"
check "$F/src/utils/model_utils.py" "elif 'llama' in model_name.lower() or 'smollm2' in model_name.lower():"
# 2. fp32, as ICL Lab runs the model on the CPU: their Llama path loads fp16 unless the name says 7b or 8b.
sed -i "s|            if '7b' in model_name.lower() or '8b' in model_name.lower():|            if '7b' in model_name.lower() or '8b' in model_name.lower() or 'smollm2' in model_name.lower():|" \
  "$F/src/utils/model_utils.py"
check "$F/src/utils/model_utils.py" "or '8b' in model_name.lower() or 'smollm2' in model_name.lower():"
# 3. Their head patch (replace_activation_w_avg) and the vector's projection (compute_function_vector) pick the
#    output projection by the model's path again ('llama' in name_or_path); the checkpoint's path names smollm2.
sed -i "s|'llama' in model_config\['name_or_path'\]|('llama' in model_config['name_or_path'] or 'smollm2' in model_config['name_or_path'])|g" \
  "$F/src/utils/intervention_utils.py" "$F/src/utils/extract_utils.py"
check "$F/src/utils/intervention_utils.py" "or 'smollm2' in model_config\['name_or_path'\])"
check "$F/src/utils/extract_utils.py" "or 'smollm2' in model_config\['name_or_path'\])"
# 4. Their Llama config says the tokenizer prepends a BOS (Llama-2's does), so no BOS text is added to the prompt
#    and the token labels start with a 'bos_token' label. SmolLM2's tokenizer adds none, which would shift every
#    token label by one: the last token would lose its 'query_predictive_token' label, and their indirect effect
#    (which patches the tokens of that class) would patch nothing. The label is added only when the tokenizer
#    really adds a BOS; the prompt text stays ICL Lab's, which has none.
sed -i 's|    token_meta_labels = tokenize_labels(prompt_parts, prompt_part_labels, tokenizer, prepend_bos)|    token_meta_labels = tokenize_labels(prompt_parts, prompt_part_labels, tokenizer, prepend_bos and tokenizer("a").input_ids[0] == tokenizer.bos_token_id)|' \
  "$F/src/utils/prompt_utils.py"
check "$F/src/utils/prompt_utils.py" 'prepend_bos and tokenizer("a").input_ids\[0\] == tokenizer.bos_token_id)'
# 5. baukit without its image helpers (check.sh says why).
baukit_without_images "$SRC/baukit-fv"

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# Their fv_environment.yml, where it installs on Python 3.11 beside torch 2.13: transformers 4.49.0 (theirs; its
# Llama decoder layer returns a tuple, whose output[0] their add_function_vector edits in place, and its tokenizers,
# 0.21, read the model's tokenizer.json), accelerate 0.21.0, huggingface-hub 0.29.3, bitsandbytes 0.45.3 (imported
# at module level by intervention_utils), numpy 1.25.0, pandas 1.5.3, scikit-learn 1.3.0, tqdm 4.65.0; safetensors
# and pillow unpinned (the runner writes its results with safetensors; baukit's __init__ imports PIL). Their datasets, jupyter, matplotlib, plotly, seaborn and
# sentencepiece are left out: nothing on this path imports them.
"$VENV/bin/pip" install -q transformers==4.49.0 accelerate==0.21.0 huggingface-hub==0.29.3 bitsandbytes==0.45.3 \
  numpy==1.25.0 pandas==1.5.3 scikit-learn==1.3.0 tqdm==4.65.0 safetensors pillow
"$VENV/bin/pip" install -q --no-deps "$SRC/baukit-fv"
"$VENV/bin/python" -c "import baukit, transformers; print('FV authors env ready:', transformers.__version__)"
