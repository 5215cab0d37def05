#!/usr/bin/env bash
# The "label words are anchors" authors' code (lancopku/label-words-are-anchors) at a pinned commit, in a virtual
# environment of its own, with the changes it needs to run on the CPU, on a Llama checkpoint and on ICL Lab's
# hand-over (bench/parity/README.md says why each is needed).
#   bench/parity/anchors_setup.sh $PARITY_SRC/label-words-are-anchors   (clones at their pinned commits: bench/parity/README.md)
set -euo pipefail
COMMIT=74b58040999c23285e4a1d221309398f14b0fe57  # lancopku/label-words-are-anchors, 2024-02-06, the newest
REPO=${1:?usage: anchors_setup.sh CLONE_OF_label-words-are-anchors}
SRC=${PARITY_SRC:?set PARITY_SRC to the folder of the clones (bench/parity/README.md)}/patched
VENV=${PARITY_ANCHORS_VENV:-$PARITY_SRC/venvs/parity-anchors}
. "$(dirname "$0")/check.sh"  # archive CLONE COMMIT DEST: the pinned files
A="$SRC/anchors"

# their package, the saliency script and the isolation scripts only: the notebooks and the other experiments are not run here
archive "$REPO" "$COMMIT" "$A" icl attention_attr.py do_shallow_layer.py do_shallow_layer_non_label.py do_compress.py \
  reweighting.py LICENSE README.md requirements.txt

patched() {  # patched FILE COUNT PATTERN: the patch left COUNT lines matching PATTERN in FILE, or the setup stops
  [ "$(grep -c -- "$3" "$A/$1")" = "$2" ] || { echo "patch did not apply to $1 ($3)" >&2; exit 1; }
}

# 1. CPU: attention_attr.py hands LMForwardAPI device='cuda:0', which moves the model there.
sed -i "s/device='cuda:0',/device='cpu',/" "$A/attention_attr.py"
patched attention_attr.py 1 "device='cpu',"

# 2. The model: their loader, their argument check and their LM wrapper know 'gpt2-xl' and 'gpt-j-6b' only; an
#    absolute path (ICL Lab's checkpoint) is let through, and their loader then reads it with from_pretrained
#    (fp32, as ICL Lab loads it on the CPU), its tokenizer's pad token set to its eos as theirs is.
sed -i "s/assert self.model_name in \['gpt2-xl', 'gpt-j-6b'\]/& or self.model_name.startswith('\/')/" \
  "$A/icl/util_classes/arg_classes.py"
patched icl/util_classes/arg_classes.py 1 "or self.model_name.startswith('/')"
sed -i "s/if args.model_name in \['gpt2-xl', 'gpt-j-6b'\]:/if args.model_name in ['gpt2-xl', 'gpt-j-6b'] or args.model_name.startswith('\/'):/" \
  "$A/icl/utils/prepare_model_and_tokenizer.py"
patched icl/utils/prepare_model_and_tokenizer.py 1 "or args.model_name.startswith('/')"
sed -i "s/assert model_name in \['gpt2-xl', 'gpt-j-6b'\]/& or model_name.startswith('\/')/" "$A/icl/lm_apis/lm_api_base.py"
patched icl/lm_apis/lm_api_base.py 1 "or model_name.startswith('/')"
#    Their tokenize_dataset truncates to get_max_length(tokenizer), which raises on a tokenizer whose config gives
#    no usable model_max_length (ours: 1e30) and says to add it to their default_max_length_dict: done, for any
#    absolute path, with 8192, the model's max_position_embeddings (no prompt here comes near it).
sed -i "s/^    if tokenizer.name_or_path in default_max_length_dict:/    if tokenizer.name_or_path.startswith('\/'):\n        return 8192  # ICL Lab's SmolLM2-135M (bench\/parity): max_position_embeddings\n&/" \
  "$A/icl/utils/data_wrapper.py"
patched icl/utils/data_wrapper.py 1 "return 8192"

# 3. The data: a task of their four (sst2, agnews, trec, emo) is a Hugging Face dataset, its label words and its
#    template; ICL Lab's hand-over (compare_anchors.py handover) is a task 'icllab' whose records, label words and
#    per-item demonstrations lie in the folder $ICLLAB_DATA: authors-{train,test}.json ({text, label} as their
#    datasets have, the test items with their demonstrations' indices), labels.json (their label_dict's values).
F=icl/util_classes/arg_classes.py
sed -i "s/assert self.task_name in \['sst2', 'agnews', 'trec', 'emo'\]/assert self.task_name in ['sst2', 'agnews', 'trec', 'emo', 'icllab']/" "$A/$F"
sed -i "s/^            label_dict = {0: ' Others', 1: ' Happy', 2: ' Sad', 3: ' Angry'}$/&\n        elif self.task_name == 'icllab':\n            label_dict = dict(enumerate(json.load(open(os.path.join(os.environ['ICLLAB_DATA'], 'labels.json')))))/" "$A/$F"
sed -i "s/^import pickle$/import json\n&/" "$A/$F"
patched "$F" 1 "'emo', 'icllab'"
patched "$F" 1 "elif self.task_name == 'icllab':"
patched "$F" 1 "^import json$"
F=icl/utils/load_huggingface_dataset.py
sed -i "s/^    if dataset is None:$/    elif task_name == 'icllab':  # ICL Lab's hand-over (bench\/parity\/compare_anchors.py handover)\n        dataset = [load_dataset('json', data_files=os.path.join(os.environ['ICLLAB_DATA'], f'authors-{s}.json'), split='train') for s in ('train', 'test')]\n&/" "$A/$F"
patched "$F" 1 "elif task_name == 'icllab':"
#    The prompt: ICL Lab's template, "Input: {x}\nOutput: {y}" with demonstrations separated by "\n\n", in place
#    of theirs (e.g. sst2's "Review: {text}\nSentiment:{label}", separated by "\n"); the answer's leading space is
#    in the label word (labels.json), as in theirs (' Positive'). Their wrappers differ only in the template, so
#    icllab's is emo's with this template and separator.
F=icl/utils/data_wrapper.py
sed -i "s/^    'emo': 'Dialogue: {text}\\\\nEmotion:{label}',$/&\n    'icllab': 'Input: {text}\\\\nOutput:{label}',/" "$A/$F"
sed -i "s/^    elif task_name == 'emo':$/    elif task_name == 'icllab':\n        return icllab_wrap_data(demonstrations, input_sample, label_dict)\n&/" "$A/$F"
cat >> "$A/$F" <<'EOF'


def icllab_wrap_data(demonstrations, input_sample, label_dict):  # emo_wrap_data, ICL Lab's template (bench/parity)
    format_s = format_s_dict['icllab']
    prompts = [format_s.format(text=sample['text'], label=label_dict[sample['label']]) for
               sample in demonstrations]
    inputs = format_s.format(text=input_sample['text'], label="")
    if len(prompts) > 0:
        inputs = "\n\n".join(prompts + [inputs])
    return inputs
EOF
patched "$F" 1 "'icllab': 'Input: {text}\\\\nOutput:{label}',"
patched "$F" 2 "icllab_wrap_data(demonstrations, input_sample, label_dict)"
#    The label words' positions: their Predictor finds each label word's first token after the two tokens that end
#    their template's answer prefix (sst2: 'Sentiment', ':'); ICL Lab's prefix ends 'Output', ':'.
F=icl/util_classes/predictor_classes.py
sed -i "s/^        elif task_name == 'emo':$/        elif task_name == 'icllab':\n            self.prefix_idxs = [tokenizer.encode('Output', add_special_tokens=False)[-1],\n                                tokenizer.encode(':', add_special_tokens=False)[0]]\n&/" "$A/$F"
patched "$F" 1 "elif task_name == 'icllab':"
#    The demonstrations: their script draws one per class for each test item (np.random.choice) and shuffles them
#    with the run's seed; here each test item takes ICL Lab's, in ICL Lab's order (the 'demos' its record carries).
F=attention_attr.py
sed -i "s/^        demonstration_part = demonstration_part.shuffle(seed=seed)$/        demonstration_part = demonstration.select(test_sample[i]['demos']) if 'demos' in test_sample.column_names else demonstration_part.shuffle(seed=seed)  # ICL Lab's (bench\/parity)/" "$A/$F"
patched "$F" 1 "demonstration.select(test_sample\[i\]\['demos'\])"

# 4. The attention: their saliency hook (attentioner_for_attribution.py) replaces GPT-2's `_attn` with `gpt2_attn`,
#    a copy of it that multiplies the post-softmax weights by the adapter's ones tensor P (whose gradient is the
#    saliency). Llama attention has no `_attn`; from transformers 4.48 its eager path is the module-level
#    `eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout)`. `llama_attn` is that
#    function of transformers 4.51.3 with their adapter line added where gpt2_attn has it (after the softmax,
#    before the dtype cast and dropout); `LlamaAttentionerManager` is their GPT2AttentionerManager over Llama's
#    layers, and makes the model take the eager path (which also makes its mask a full 4-D causal mask).
F=icl/analysis/attentioner_for_attribution.py
cat >> "$A/$F" <<'EOF'


def llama_eager_attention(adapter_before_softmax):
    """transformers 4.51.3 modeling_llama.eager_attention_forward with their adapter line added (bench/parity):
    after the softmax (gpt2_attn's place, the saliency and re-weighting hooks) or before it (the isolation hook)."""
    def attn(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        from transformers.models.llama.modeling_llama import repeat_kv
        key_states = repeat_kv(key, module.num_key_value_groups)
        value_states = repeat_kv(value, module.num_key_value_groups)

        attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
        if attention_mask is not None:
            causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
            attn_weights = attn_weights + causal_mask

        if adapter_before_softmax:
            attn_weights = module.attention_adapter(attn_weights)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
        if not adapter_before_softmax:
            attn_weights = module.attention_adapter(attn_weights)

        attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()

        return attn_output, attn_weights
    return attn


llama_attn = llama_eager_attention(adapter_before_softmax=False)


class LlamaAttentionerManager(AttentionerManagerBase):  # GPT2AttentionerManager for Llama (bench/parity)
    def __init__(self, model: PreTrainedModel):
        super().__init__(model)

    def register_attentioner_to_model(self):
        from transformers.models.llama import modeling_llama
        modeling_llama.eager_attention_forward = llama_attn
        self.model.config._attn_implementation = 'eager'
        attention_adapters = []
        for i, layer in enumerate(self.model.model.layers):
            attention_adapter = AttentionAdapter()
            layer.self_attn.attention_adapter = attention_adapter
            attention_adapters.append(attention_adapter)
        return attention_adapters
EOF
patched "$F" 1 "^llama_attn = llama_eager_attention(adapter_before_softmax=False)$"
#    and attention_attr.py picks it for a Llama model, as it picks GPT2AttentionerManager for 'gpt2-xl'.
F=attention_attr.py
sed -i "s/^    attentionermanger = GPT2AttentionerManager(model.model)$/&\nelif model.model.config.model_type == 'llama':\n    attentionermanger = icl.analysis.attentioner_for_attribution.LlamaAttentionerManager(model.model)/" "$A/$F"
patched "$F" 1 "LlamaAttentionerManager(model.model)"

# 5. Isolation (icl/analysis/shallow_layer.py, and shallow_layer_non_label.py, its random-token control): the same
#    changes for the same reasons, and a second Llama hook. Both scripts get each change, so the control runs as
#    the isolation does.
for F in icl/analysis/shallow_layer.py icl/analysis/shallow_layer_non_label.py; do
  #  CPU, as 1.
  sed -i "s/device='cuda:0',/device='cpu',/" "$A/$F"
  patched "$F" 1 "device='cpu',"
  #  The demonstrations: theirs are one set per run shared by every test item, drawn per class from the training
  #  part by sample_two_set_with_shot_per_class; here the set ICL Lab's fixed_demo_prompts draws, in its order
  #  (shared-demos.json: indices into authors-train.json).
  sed -i "s/^                                                              a_total_shot=args.demonstration_total_shot)$/&\n        if args.task_name == 'icllab':  # ICL Lab's shared demonstrations (bench\/parity)\n            demonstration = dataset['train'].select(json.load(open(os.path.join(os.environ['ICLLAB_DATA'], 'shared-demos.json'))))/" "$A/$F"
  sed -i "s/^import pickle$/import json\n&/" "$A/$F"
  patched "$F" 1 "'shared-demos.json'"
  patched "$F" 1 "^import json$"
  #  The attention: their Llama-less managers pick by model name; a Llama model gets LlamaAttentionerManager below.
  sed -i "s/^    elif args.model_name in \['gpt2-xl'\]:$/    elif model.model.config.model_type == 'llama':  # bench\/parity\n        attentionermanger = LlamaAttentionerManager(model.model, attention_adapters)\n&/" "$A/$F"
  sed -i "s/^from .attentioner import \(.*\)$/from .attentioner import \1, LlamaAttentionerManager/" "$A/$F"
  patched "$F" 1 "attentionermanger = LlamaAttentionerManager(model.model, attention_adapters)"
  patched "$F" 1 "^from .attentioner import .*, LlamaAttentionerManager$"
done
#    Their adapters (AttentionAdapter, AttentionAdapterNonLabel) find label words as their Predictor does, by the two
#    tokens ending the answer prefix; icllab's are 'Output', ':' as in 3. Both classes get the branch.
F=icl/analysis/attentioner.py
sed -i "s/^        elif task_name == 'emo':$/        elif task_name == 'icllab':\n            self.prefix_idxs = [tokenizer.encode('Output', add_special_tokens=False)[-1],\n                                tokenizer.encode(':', add_special_tokens=False)[0]]\n&/" "$A/$F"
patched "$F" 2 "elif task_name == 'icllab':"
#    The control draws with random.sample from a set, which Python 3.11 refuses; Python 3.10 took tuple(set), which
#    for a set of small ints is its sorted order, so sorted() keeps their draw.
sed -i "s/random_word_idxs = random.sample(non_label_idxs, /random_word_idxs = random.sample(sorted(non_label_idxs), /" "$A/$F"
patched "$F" 1 "random.sample(sorted(non_label_idxs), "
#    The hook: their isolation adapter edits the attention scores before the softmax (gpt2_attn and gptj_attn call
#    it after the masks are added, before the softmax): 4.'s `llama_eager_attention` with the adapter there;
#    `LlamaAttentionerManager` is their GPT2AttentionerManager over Llama's layers, and makes the model take the
#    eager path, as in 4.
cat >> "$A/$F" <<'EOF'


class LlamaAttentionerManager(AttentionerManagerBase):  # GPT2AttentionerManager for Llama (bench/parity)
    def __init__(self, model: PreTrainedModel, attention_adapters: List[AttentionAdapterBase]):
        super().__init__(model, attention_adapters)

    def register_attentioner_to_model(self):
        from transformers.models.llama import modeling_llama
        from icl.analysis.attentioner_for_attribution import llama_eager_attention
        modeling_llama.eager_attention_forward = llama_eager_attention(adapter_before_softmax=True)
        self.model.config._attn_implementation = 'eager'
        for i, layer in enumerate(self.model.model.layers):
            layer.self_attn.attention_adapter = self.attention_adapters[i]
EOF
patched "$F" 1 "llama_eager_attention(adapter_before_softmax=True)"

# 6. Compression (icl/analysis/compress.py, their Hidden_anchor: the demonstrations run once, their KV cache cut to
#    the positions ContextSolver.get_mask finds, every test query answered against it).
F=icl/analysis/compress.py
#  CPU, and ICL Lab's shared demonstrations, as in 5.
sed -i "s/device='cuda:0',/device='cpu',/" "$A/$F"
sed -i "s/^                                                              a_total_shot=args.demonstration_total_shot)$/&\n        if args.task_name == 'icllab':  # ICL Lab's shared demonstrations (bench\/parity)\n            demonstration = dataset['train'].select(json.load(open(os.path.join(os.environ['ICLLAB_DATA'], 'shared-demos.json'))))/" "$A/$F"
sed -i "s/^import pickle$/import json\n&/" "$A/$F"
patched "$F" 1 "device='cpu',"
patched "$F" 1 "'shared-demos.json'"
#  The query's positions: GPT-J's (rotary, as Llama's) start after the last cached position; GPT-2 starts at 0
#  (learnt positions); Llama takes GPT-J's branch here and in LMForwardAPI.cal_logits, which passes position_ids.
sed -i "s/^        if args.model_name == 'gpt-j-6b':$/        if args.model_name == 'gpt-j-6b' or model.model.config.model_type == 'llama':  # bench\/parity/" "$A/$F"
patched "$F" 1 "model.model.config.model_type == 'llama':  # bench/parity"
#  The queries' collator truncates to the tokenizer's max_len_single_sentence less the cache, a tensor: ours (1e30)
#  overflows it. get_max_length (8192 for ours, 2.'s patch) gives it, and their models' 1024 / 2048 unchanged.
sed -i "s/^            max_length=tokenizer.max_len_single_sentence - mask.sum())$/            max_length=get_max_length(tokenizer) - mask.sum())  # bench\/parity/" "$A/$F"
sed -i "s/^from ..utils.data_wrapper import wrap_dataset, tokenize_dataset, /&get_max_length, /" "$A/$F"
patched "$F" 1 "max_length=get_max_length(tokenizer) - mask.sum())"
patched "$F" 1 "import wrap_dataset, tokenize_dataset, get_max_length, "
#  Hidden_random draws with random.sample from a set, which Python 3.11 refuses: sorted(), as in 5.
sed -i "s/single_other_idx = random.sample(single_other_idxs, 1)\[0\]/single_other_idx = random.sample(sorted(single_other_idxs), 1)[0]/" "$A/$F"
patched "$F" 1 "random.sample(sorted(single_other_idxs), 1)"
F=icl/lm_apis/lm_api_base.py
sed -i "s/^            if self.model_name in \['gpt-j-6b','gpt2-xl'\]:$/            if self.model_name in ['gpt-j-6b','gpt2-xl'] or self.model.config.model_type == 'llama':  # bench\/parity/" "$A/$F"
patched "$F" 1 "or self.model.config.model_type == 'llama':  # bench/parity"
#  The cache: their code (transformers 4.28) keeps it as a tuple of (key, value) tuples; 4.51's Llama takes and returns
#  a Cache object only (which their Trainer cannot gather). What the model returns is handed back as 4.28's tuple,
#  and the tuple they build is handed to the model as the DynamicCache holding the same tensors.
sed -i "s/^        logits = results\['logits'\]$/        if 'past_key_values' in results and hasattr(results['past_key_values'], 'to_legacy_cache'):  # bench\/parity\n            results['past_key_values'] = results['past_key_values'].to_legacy_cache()\n&/" "$A/$F"
patched "$F" 1 "results\['past_key_values'\].to_legacy_cache()"
sed -i "s/^        return past_key_values$/        from transformers import DynamicCache  # transformers 4.51 takes a Cache object (bench\/parity)\n        return DynamicCache.from_legacy_cache(past_key_values)/" "$A/$F"
patched "$F" 1 "return DynamicCache.from_legacy_cache(past_key_values)"
#  The formatting tokens: ContextSolver reads a template's lines ("Review: ...", "Sentiment: ..."), and stops on any
#  other (raise warnings.warn(...), which raises a TypeError); ICL Lab's separator "\n\n" leaves an empty line
#  between demonstrations, which holds no prefix and no text: it is passed over. And icllab is a task it knows.
F=icl/util_classes/context_solver.py
sed -i "s/^        assert task_name in \['sst2', 'trec', 'agnews', 'emo'\]$/        assert task_name in ['sst2', 'trec', 'agnews', 'emo', 'icllab']/" "$A/$F"
sed -i "s/^            if self.X_prefix in line:$/            if line == '' and self.task_name == 'icllab':  # \"\\\\n\\\\n\" separator (bench\/parity)\n                pass\n            elif self.X_prefix in line:/" "$A/$F"
patched "$F" 1 "'emo', 'icllab'\]"
#  The design: their strings keep each demonstration's "\n" + "Output: <label>" + "\n" and "Input:" (the "\n" before
#  it too, but not the query's: get_mask matches before the query only). With their one-"\n" separator that is every
#  formatting token of the demonstrations; ICL Lab's "\n\n" is two "\n" tokens, and the second before the query is
#  then left out, and the query's positions start there (the last kept + 1). ICL Lab keeps it, and starts the query
#  after it. With ICLLAB_COMPRESS_DESIGN=matched it is kept (anchors_authors.py --design matched, the default);
#  unset, their strings alone decide (--design ported).
sed -i "s/^        return mask$/        if self.task_name == 'icllab' and os.environ.get('ICLLAB_COMPRESS_DESIGN') == 'matched':  # bench\/parity\n            mask[match_before - 1] = True  # the separator's last token before the query\n&/" "$A/$F"
sed -i "s/^import warnings$/import os\n&/" "$A/$F"
patched "$F" 1 "mask\[match_before - 1\] = True"
patched "$F" 1 "^import os$"
patched "$F" 2 "if line == '' and self.task_name == 'icllab':"

# 7. Re-weighting (icl/analysis/reweighting.py: a weight per layer, head and label word, exp() times the final
#    position's attention to that label word after the softmax, trained with Adam on training examples).
F=icl/analysis/reweighting.py
#  CPU, as 1.
sed -i "s/device='cuda:0',/device='cpu',/" "$A/$F"
patched "$F" 1 "device='cpu',"
#  The demonstrations and the training examples: theirs are drawn together per class by
#  sample_two_set_with_shot_per_class; here ICL Lab's shared set and its training examples (reweight-train.json:
#  indices into authors-train.json, in ICL Lab's order).
sed -i "s/^                                                                          a_total_shot=args.demonstration_total_shot)$/&\n        if args.task_name == 'icllab':  # ICL Lab's demonstrations and training examples (bench\/parity)\n            demonstration, train_samples = (dataset['train'].select(json.load(open(os.path.join(os.environ['ICLLAB_DATA'], f)))) for f in ('shared-demos.json', 'reweight-train.json'))/" "$A/$F"
sed -i "s/^import pickle$/import json\n&/" "$A/$F"
patched "$F" 1 "'shared-demos.json', 'reweight-train.json'"
patched "$F" 1 "^import json$"
#  The order: theirs reshuffles the previous epoch's order (Dataset.shuffle, unseeded); ICL Lab shuffles the
#  examples afresh each epoch with its own seeded generator. reweight-order.json holds ICL Lab's order per epoch.
sed -i "s/^        for epoch in tqdm(range(args.epoch_num)):$/        icllab_train = train_dataset  # bench\/parity\n&/" "$A/$F"
sed -i "s/^            train_dataset = train_dataset.shuffle()$/            train_dataset = train_dataset.shuffle() if args.task_name != 'icllab' else icllab_train.select(json.load(open(os.path.join(os.environ['ICLLAB_DATA'], 'reweight-order.json')))[epoch])  # ICL Lab's order (bench\/parity)/" "$A/$F"
patched "$F" 1 "icllab_train = train_dataset  # bench/parity"
patched "$F" 1 "icllab_train.select(json.load"
#  The attention: their training manager knows GPT-2 only. A Llama model gets LlamaAttentionerManager, their
#  GPT2AttentionerManager over Llama's layers with 4.'s llama_attn, which calls the adapter after the softmax as
#  gpt2_attn does.
sed -i "s/^        if args.model_name in \['gpt2-xl'\]:$/        if model.model.config.model_type == 'llama':  # bench\/parity\n            attentionermanger = LlamaAttentionerManager(model.model, len(demonstration), predictor=predictor, device=model.device, n_head=args.n_head)\n        elif args.model_name in ['gpt2-xl']:/" "$A/$F"
sed -i "s/^    GPT2AttentionerManager$/    GPT2AttentionerManager, LlamaAttentionerManager/" "$A/$F"
patched "$F" 1 "attentionermanger = LlamaAttentionerManager(model.model, len(demonstration)"
patched "$F" 1 "GPT2AttentionerManager, LlamaAttentionerManager$"
F=icl/analysis/attentioner_for_train.py
cat >> "$A/$F" <<'EOF'


class LlamaAttentionerManager(AttentionerManagerBase):  # GPT2AttentionerManager for Llama (bench/parity)
    def __init__(self, model: PreTrainedModel, n_demo, predictor: Predictor, device, n_head=1):
        super().__init__(model, predictor, n_demo, device, n_head=n_head)

    def register_attentioner_to_model(self):
        from transformers.models.llama import modeling_llama
        from icl.analysis.attentioner_for_attribution import llama_attn
        modeling_llama.eager_attention_forward = llama_attn
        self.model.config._attn_implementation = 'eager'
        attention_adapters = []
        for i, layer in enumerate(self.model.model.layers):
            attention_adapter = AttentionAdapter(n_demo=self.n_demo, device=self.device, n_head=self.n_head)
            layer.self_attn.attention_adapter = attention_adapter
            attention_adapters.append(attention_adapter)
        return attention_adapters
EOF
patched "$F" 1 "class LlamaAttentionerManager"

python3.11 -m venv "$VENV"
"$VENV/bin/pip" install -q torch==2.13.0
# Their pins (requirements.txt) where they install on Python 3.11: datasets 2.10.1, numpy 1.24.1, tqdm 4.65.0;
# torch 2.13.0 (CPU wheel) for their 2.0.0+cu118. Their transformers is a 4.28 development build; 4.51.3 here:
# its Llama attention goes through the module-level eager_attention_forward that the Llama hook above ports (4.48
# on), its tokenizers (0.21) reads the model's tokenizer.json (4.40's cannot), and their Trainer, HfArgumentParser
# and GPT-2 imports still work. accelerate 0.26.0: the oldest that 4.51's Trainer takes. Two pins their datasets
# 2.10.1 needs today: pyarrow 15 (the newest pyarrow refuses numpy 1.x) and fsspec 2023.6.0 (from 2023.10 on,
# datasets 2.10 cannot load a local JSON file: "Loading a dataset cached in a LocalFileSystem is not supported").
"$VENV/bin/pip" install -q transformers==4.51.3 accelerate==0.26.0 datasets==2.10.1 numpy==1.24.1 tqdm==4.65.0 \
  pyarrow==15.0.2 "fsspec[http]==2023.6.0" safetensors
"$VENV/bin/python" -c "import datasets, transformers; print('anchors authors env ready:', transformers.__version__)"
