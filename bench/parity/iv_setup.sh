#!/usr/bin/env bash
# The iterative vectors' authors' code (ArkciaTheDragon/iterative-vectors) at a pinned commit, in a virtual
# environment of its own, with the changes it needs to run on the CPU and to see ICL Lab's prompts
# (bench/parity/README.md says why each is needed).
#   bench/parity/iv_setup.sh $PARITY_SRC/iterative-vectors $PARITY_SRC/baukit   (clones at their pinned commits)
set -euo pipefail
COMMIT=a15ddcc62bf87ea9b21be6f4fb85a66df1717992  # ArkciaTheDragon/iterative-vectors, 2025-07-15, "Code release"
BAUKIT_COMMIT=9d51abd51ebf29769aecc38c4cbef459b731a36e  # davidbau/baukit, the commit their env.yaml installs
REPO=${1:?usage: iv_setup.sh CLONE_OF_iterative-vectors CLONE_OF_baukit}
BAUKIT=${2:?usage: iv_setup.sh CLONE_OF_iterative-vectors CLONE_OF_baukit}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_IV_VENV:-$PARITY_SRC/venvs/parity-iv}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files; check FILE PATTERN: the change applied
F="$SRC/iterative-vectors"

# Their code only: iv.py and what it imports (no data ships with it)
archive "$REPO" "$COMMIT" "$F" iv.py util.py args.py config LICENSE README.md
archive "$BAUKIT" "$BAUKIT_COMMIT" "$SRC/baukit-iv"

# 1. The CPU: with no device map their loader moves the model to the first GPU given (`-g`, integers only).
sed -i 's|        model = model.to(args.gpu\[0\])|        model = model.to("cpu")|' "$F/util.py"
check "$F/util.py" 'model = model.to("cpu")'
# 2. The prompt: ICL Lab's template ("Input: x\nOutput: y" joined by "\n\n") in place of theirs ("x\ny" joined by
#    "\n\n\n"), set in their Verbalizer (every prompt of theirs is built by it): the defaults of its two separators,
#    and the sample's format, which gains the "Input: " before the input and the space before the answer.
sed -i 's|        example_sep="\\n\\n\\n",|        example_sep="\\n\\n",|; s|        input_output_sep="\\n",|        input_output_sep="\\nOutput:",|' \
  "$F/util.py"
check "$F/util.py" 'example_sep="\\n\\n",'
check "$F/util.py" 'input_output_sep="\\nOutput:",'
sed -i "s|untrunc_text = f\"{sample\['input'\].rstrip()}{self.io_sep_mark}{'' if no_output else sample\['output'\]}\"|untrunc_text = f\"Input: {sample['input'].rstrip()}{self.io_sep_mark}{'' if no_output else ' ' + sample['output']}\"|" \
  "$F/util.py"
check "$F/util.py" "untrunc_text = f\"Input: {sample\['input'\].rstrip()}{self.io_sep_mark}{'' if no_output else ' ' + sample\['output'\]}\""
# 3. The separator's tokens: their Verbalizer tokenises the separator alone and splices its ids between examples;
#    SmolLM2's tokenizer reads "\n\n" alone as one token but, in a whole prompt, "\n\n" before the next "Input" as
#    two "\n" tokens (how ICL Lab's prompt is tokenised). Tokenised newline by newline, the ids are the same.
sed -i 's|        self.ex_sep_ids = tokenizer(example_sep, add_special_tokens=False)\["input_ids"\]|        self.ex_sep_ids = [i for c in example_sep for i in tokenizer(c, add_special_tokens=False)["input_ids"]]|' \
  "$F/util.py"
check "$F/util.py" 'self.ex_sep_ids = \[i for c in example_sep for i in tokenizer(c, add_special_tokens=False)'
# 4. The label tokens they score (argmax over each label's first token): the answer now follows a space (change 2),
#    so the first token of " label", the token ICL Lab scores.
sed -i 's|    i: tokenizer.encode(l, add_special_tokens=False)\[0\] for i, l in i2label.items()|    i: tokenizer.encode(" " + l, add_special_tokens=False)[0] for i, l in i2label.items()|' "$F/iv.py"
check "$F/iv.py" 'tokenizer.encode(" " + l, add_special_tokens=False)\[0\]'
# 5. baukit without its image helpers (check.sh says why).
baukit_without_images "$SRC/baukit-iv"

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# Their env.yaml (conda, Python 3.13, CUDA torch 2.7.1), where it installs on Python 3.11 beside the CPU torch:
# transformers 4.53.2 (tokenizers 0.21, which reads the model's tokenizer.json), accelerate 1.8.1, datasets 2.21.0
# with fsspec 2024.6.1 and pyarrow 20.0.0, huggingface-hub 0.33.3, numpy 2.3.1, scikit-learn 1.7.0, pyyaml 6.0.2,
# tqdm 4.67.1, safetensors 0.5.3, pillow 11.3.0 (baukit's __init__ imports PIL); tokenizers as transformers pulls it
# (0.21.4: their conda build's 0.21.3 is not on PyPI). Their jupyter, plotting and audio packages are left out:
# nothing on this path imports them.
"$VENV/bin/pip" install -q transformers==4.53.2 accelerate==1.8.1 datasets==2.21.0 \
  fsspec==2024.6.1 pyarrow==20.0.0 huggingface-hub==0.33.3 numpy==2.3.1 scikit-learn==1.7.0 pyyaml==6.0.2 \
  tqdm==4.67.1 safetensors==0.5.3 pillow==11.3.0
"$VENV/bin/pip" install -q --no-deps "$SRC/baukit-iv"
"$VENV/bin/python" -c "import baukit, datasets, transformers; print('IV authors env ready:', transformers.__version__)"
