#!/usr/bin/env bash
# SITE's authors' code (SNU-DRL/Soft_Injection) at a pinned commit, in a virtual environment of its own, with the
# few changes it needs to run here (bench/parity/README.md says why each is needed).
#   bench/parity/site_setup.sh $PARITY_SRC/Soft_Injection $PARITY_SRC/baukit   (clones at their pinned commits: bench/parity/README.md)
set -euo pipefail
COMMIT=750f28cca54add31237bff56f2fc8cc4c2e1a6cf  # SNU-DRL/Soft_Injection, 2026-04-13
BAUKIT_COMMIT=9d51abd51ebf29769aecc38c4cbef459b731a36e  # davidbau/baukit main, 2024-02-22 (their @main)
REPO=${1:?usage: site_setup.sh CLONE_OF_Soft_Injection CLONE_OF_baukit}
BAUKIT=${2:?usage: site_setup.sh CLONE_OF_Soft_Injection CLONE_OF_baukit}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_VENV:-$PARITY_SRC/venvs/parity-site}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files

archive "$REPO" "$COMMIT" "$SRC/soft_injection"
archive "$BAUKIT" "$BAUKIT_COMMIT" "$SRC/baukit"

# 1. CPU: every tensor is sent to 'cuda' by name.
sed -i "s/'cuda'/'cpu'/g; s/\"cuda\"/\"cpu\"/g" "$SRC"/soft_injection/{models,utils,preprocess}.py
# 2. The model: load_model knows hub names only; a local Llama checkpoint named smollm2 takes the Llama path.
sed -i 's|if model_name.lower() == "meta-llama/Llama-3.1-8b".lower()|if "smollm2" in model_name.lower() or model_name.lower() == "meta-llama/Llama-3.1-8b".lower()|' \
  "$SRC/soft_injection/utils.py"
# 3. The prompt: ICL Lab's template ("Input: x\nOutput: y\n\n") in place of theirs ("Q: x\nA: y\n\n"), the
#    same layout otherwise, so both sides see byte-identical prompts.
sed -i 's|prefixes: dict = {"input":"Q:", "output":"A:","instructions":""}|prefixes: dict = {"input":"Input:", "output":"Output:","instructions":""}|' \
  "$SRC/soft_injection/preprocess.py"
# 4. baukit's package imports its image-folder helpers, which need torchvision; PyPI's torchvision is a CUDA build
#    that does not load beside torch's CPU wheel, and nothing the authors use needs it.
sed -i '/parallelfolder\|renormalize/d' "$SRC/baukit/baukit/__init__.py"
for f in utils.py preprocess.py; do
  grep -q "smollm2\|Input:" "$SRC/soft_injection/$f" || { echo "patch did not apply to $f" >&2; exit 1; }
done

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# The authors' pins (site_environment.yml) where they install on Python 3.11; datasets, jupyter, matplotlib,
# plotly, seaborn, openpyxl and openai are pinned there but never imported by eval.py, so they are left out.
"$VENV/bin/pip" install -q transformers==4.51.3 accelerate==0.26.0 bitsandbytes==0.46.1 numpy==1.26.4 \
  pandas==2.2.2 scikit-learn==1.3.0 tqdm==4.66.2 sentencepiece==0.2.0 safetensors pillow
"$VENV/bin/pip" install -q --no-deps "$SRC/baukit"
"$VENV/bin/python" -c "import baukit, transformers; print('SITE authors env ready:', transformers.__version__)"
