#!/usr/bin/env bash
# The task vectors' authors' code (roeehendel/icl_task_vectors) at a pinned commit, in a virtual environment of
# its own, with the one change it needs to see ICL Lab's prompts (bench/parity/README.md says why).
#   bench/parity/tv_setup.sh $PARITY_SRC/icl_task_vectors   (clones at their pinned commits: bench/parity/README.md)
set -euo pipefail
COMMIT=1da0db608c69662cecc1ee7352b84531c1acc435  # roeehendel/icl_task_vectors, 2023-10-30, the newest
REPO=${1:?usage: tv_setup.sh CLONE_OF_icl_task_vectors}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_TV_VENV:-$PARITY_SRC/venvs/parity-tv}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files

# their code only: nothing here reads their large result pickles under outputs/
archive "$REPO" "$COMMIT" "$SRC/icl_task_vectors" core

# The prompt: ICL Lab's template ("Input: x\nOutput: y\n\n") in place of theirs ("example:x->y\n"), set in their
# FewShotFormat's defaults, which every one of their functions uses; the answer carries its leading space in the
# task's mapping, as their mapping tasks do.
F="$SRC/icl_task_vectors/core/data/datasets/few_shot_format.py"
sed -i 's|example_format: str = "example:{input}->{output}"|example_format: str = "Input: {input}\\nOutput:{output}"|; s|example_separator: str = "\\n"|example_separator: str = "\\n\\n"|; s|test_example_format: Optional\[str\] = "example:{input}->"|test_example_format: Optional[str] = "Input: {input}\\nOutput:"|' "$F"
[ "$(grep -c 'Input: {input}' "$F")" = 2 ] && grep -q 'example_separator: str = "\\n\\n"' "$F" \
  || { echo "patch did not apply to $F" >&2; exit 1; }

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# Their requirements.in pins nothing. Transformers 4.46 still hands back the tuple-of-tuples KV cache their layer
# sweep slices (`nested_apply(past_key_values, ...)`), and its tokenizers (0.20) reads the model's tokenizer.json,
# which 4.40's (0.19) cannot parse.
"$VENV/bin/pip" install -q transformers==4.46.3 accelerate==0.30.1 numpy==1.26.4 tqdm safetensors python-dotenv
"$VENV/bin/python" -c "import transformers; print('task-vector authors env ready:', transformers.__version__)"
