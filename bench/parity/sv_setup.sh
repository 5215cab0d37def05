#!/usr/bin/env bash
# The ICL state vectors' authors' code (HITsz-TMG/ICL-State-Vector) at a pinned commit, in a virtual environment of
# its own, with the few changes it needs to run here on SmolLM2 (bench/parity/README.md says why each is needed).
#   bench/parity/sv_setup.sh $PARITY_SRC/ICL-State-Vector $PARITY_SRC/baukit   (clones at their pinned commits: bench/parity/README.md)
set -euo pipefail
COMMIT=58fa666c864efbd79c858205895ad44005a5129d  # HITsz-TMG/ICL-State-Vector, 2024-07-04, the newest
BAUKIT_COMMIT=9d51abd51ebf29769aecc38c4cbef459b731a36e  # davidbau/baukit main, 2024-02-22 (their baukit 0.0.1)
REPO=${1:?usage: sv_setup.sh CLONE_OF_ICL-State-Vector CLONE_OF_baukit}
BAUKIT=${2:?usage: sv_setup.sh CLONE_OF_ICL-State-Vector CLONE_OF_baukit}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_SV_VENV:-$PARITY_SRC/venvs/parity-sv}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files; check FILE PATTERN: the change above it applied
F="$SRC/icl_state_vector"

# Their code only: nothing here reads their data/ or agg_data/ files (the runner reads the handed-over split)
archive "$REPO" "$COMMIT" "$F" TVeval.py TVframework.py optimizer.py utils.py selected_layers.py \
  state_vector_optimize.py README.md requirements.txt
archive "$BAUKIT" "$BAUKIT_COMMIT" "$SRC/baukit-sv"

# 1. The model: Evaluator.load knows a model by a substring of its path ('llama' or 'gptj') to name the modules it
#    hooks; a local Llama checkpoint named smollm2 takes their Llama path (model.layers.{l}.self_attn.o_proj).
sed -i "s|        if 'llama' in model_path.lower():|        if 'llama' in model_path.lower() or 'smollm2' in model_path.lower():|" "$F/TVframework.py"
check "$F/TVframework.py" "if 'llama' in model_path.lower() or 'smollm2' in model_path.lower():"
# 2. The CPU: a single device is a CUDA index (`.to(devices[0])`); the model stays on the CPU, in fp32 (their default).
sed -i "s|load_in_8bit=load_int8).to(devices\[0\])|load_in_8bit=load_int8).to('cpu')|" "$F/TVframework.py"
check "$F/TVframework.py" "load_in_8bit=load_int8).to('cpu')"
# 3. baukit without its image helpers (check.sh says why).
baukit_without_images "$SRC/baukit-sv"

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# Their requirements.txt is a frozen conda environment for Python 3.8, torch 1.13.1 and transformers 4.28.1, whose
# tokenizers (0.13) is older than 0.19, which already cannot parse the model's tokenizer.json (the task vectors'
# section of bench/parity/README.md); transformers 4.46.3 (tokenizers 0.20) reads it and still has the Llama
# attention whose o_proj input their TraceDict reads and rewrites. Kept from their pins where they install on 3.11:
# peft 0.3.0 (TVframework imports it), matplotlib 3.7.1 and seaborn 0.13.0 (utils.py imports them), tqdm 4.65.0;
# numpy 1.26.4 (theirs is a conda build); accelerate 0.30.1, as for the task vectors (peft requires one; their
# 0.19.0 was not tried); pyyaml and requests (TVeval imports them) and safetensors (the runner's output) unpinned.
"$VENV/bin/pip" install -q transformers==4.46.3 accelerate==0.30.1 peft==0.3.0 matplotlib==3.7.1 seaborn==0.13.0 \
  tqdm==4.65.0 numpy==1.26.4 pyyaml requests safetensors
"$VENV/bin/pip" install -q --no-deps "$SRC/baukit-sv"
"$VENV/bin/python" -c "import baukit, peft, transformers; print('SV authors env ready:', transformers.__version__)"
