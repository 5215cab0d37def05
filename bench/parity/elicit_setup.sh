#!/usr/bin/env bash
# ELICIT's authors' code (LINs-lab/ELICIT) at a pinned commit, in a virtual environment of its own, with the few
# changes it needs to run here on ICL Lab's prompts (bench/parity/README.md says why each is needed).
#   bench/parity/elicit_setup.sh $PARITY_SRC/ELICIT $PARITY_SRC/baukit   (clones at their pinned commits: bench/parity/README.md)
set -euo pipefail
COMMIT=aa47dac4d6f9087453e6fed2738fea63e7871ca6  # LINs-lab/ELICIT, 2025-03-11, the newest
BAUKIT_COMMIT=9d51abd51ebf29769aecc38c4cbef459b731a36e  # davidbau/baukit main, 2024-02-22 (they import baukit)
REPO=${1:?usage: elicit_setup.sh CLONE_OF_ELICIT CLONE_OF_baukit}
BAUKIT=${2:?usage: elicit_setup.sh CLONE_OF_ELICIT CLONE_OF_baukit}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_ELICIT_VENV:-$PARITY_SRC/venvs/parity-elicit}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files; check FILE PATTERN: the change above it applied
E="$SRC/elicit"

archive "$REPO" "$COMMIT" "$E"
archive "$BAUKIT" "$BAUKIT_COMMIT" "$SRC/baukit-elicit"


# 1. The prompt: ICL Lab's template ("Input: x\nOutput: y\n\n") in place of theirs ("Q: x\nA: y\n\n"). Their
#    --prefixes argument is parsed but never passed on (get_mean_layer_activations, n_shot_eval and
#    n_shot_eval_no_intervention all fall back on word_pairs_to_prompt_data's default), so the default changes;
#    the layout is otherwise the same (a space before input and answer, "\n" after the input, "\n\n" between
#    examples), so both sides see byte-identical prompts, which the comparison checks on a probe prompt.
sed -i 's|prefixes: dict = {"input":"Q:", "output":"A:", "instructions":""},|prefixes: dict = {"input":"Input:", "output":"Output:", "instructions":""},|' \
  "$E/utils/data_utils.py"
check "$E/utils/data_utils.py" 'prefixes: dict = {"input":"Input:", "output":"Output:", "instructions":""},'
# 2. The model: load_model_and_tokenizer knows a model by its name ("llama", "mistral", ...); a local Llama
#    checkpoint named smollm2 takes their Llama path (AutoModelForCausalLM, device_map="auto", the hook names
#    model.layers.{l}, prepend_bos True: no BOS text added by hand).
sed -i 's|    if "llama" in model_name:|    if "llama" in model_name or "smollm2" in model_name:|' "$E/utils/model_utils.py"
check "$E/utils/model_utils.py" 'if "llama" in model_name or "smollm2" in model_name:'
# 3. baukit without its image helpers (check.sh says why).
baukit_without_images "$SRC/baukit-elicit"

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# Their repository pins nothing (no requirements file); these are what compute_avg_hidden_state.py and the
# modules it imports import. Transformers 4.46: its Llama decoder layer still returns a tuple (their hooks
# edit output[0] in place), and its tokenizers (0.20) read the model's tokenizer.json, which 0.19 (4.40) cannot.
# sentence-transformers, nltk, datasets and matplotlib are imported at module level but unused on this path;
# pyarrow (datasets') 17, built against NumPy 1 (the newest requires NumPy 2).
"$VENV/bin/pip" install -q transformers==4.46.3 accelerate==0.30.1 numpy==1.26.4 pandas==2.2.2 scikit-learn==1.5.2 \
  scipy==1.14.1 matplotlib==3.9.2 nltk==3.9.1 datasets==3.1.0 pyarrow==17.0.0 sentence-transformers==3.3.1 tqdm \
  safetensors
"$VENV/bin/pip" install -q --no-deps "$SRC/baukit-elicit"
"$VENV/bin/python" -c "import baukit, transformers; print('ELICIT authors env ready:', transformers.__version__)"
