"""Zero-/few-shot methods, the evaluation loop, hook hygiene and the eval CLI on the tiny model."""

import json

import pytest

from icr_app.cli import main
from icr_app.evaluate import evaluate
from icr_app.hooks import hooks
from icr_app.methods import FewShot, ZeroShot, is_correct
from icr_app.models import ModelNotFoundError, load_model
from icr_app.tasks import builtin_task, split


def test_zero_and_few_shot_predictions(lm):
    train, test = split(builtin_task("sentiment"), 6, seed=0)
    zs = ZeroShot(lm, train).predict(test.inputs)
    fs = FewShot(lm, train, shots=4, seed=0).predict(test.inputs)
    for z, f, x in zip(zs, fs, test.inputs):
        assert z.prompt == f"Input: {x}\nOutput:"
        assert f.prompt.count("Output:") == 5 and f.prompt.endswith(z.prompt)
        assert f.prompt_tokens > z.prompt_tokens
        assert set(z.label_probs) == {"positive", "negative"}
        assert z.prediction == max(z.label_probs, key=z.label_probs.get)
    again = FewShot(lm, train, shots=4, seed=0).predict(test.inputs)
    assert [p.prompt for p in again] == [p.prompt for p in fs]


def test_predict_order_is_kept_across_length_sorted_batches(lm):
    train, test = split(builtin_task("antonyms"), 7, seed=1)
    method = ZeroShot(lm, train)
    batched = method.predict(test.inputs, batch_size=3)
    single = [method.predict([x])[0] for x in test.inputs]
    assert [p.query for p in batched] == test.inputs
    assert [p.generated for p in batched] == [p.generated for p in single]


def test_evaluate_report(lm):
    rep = evaluate(lm, builtin_task("headline-topic"), ["zero-shot", "few-shot"], n_test=8, seed=0, shots=4)
    assert rep.n_test == 8 and rep.kind == "classification"
    zs, fs = rep.methods["zero-shot"], rep.methods["few-shot"]
    assert zs.latency_ratio_to_zero_shot == 1.0
    assert fs.latency_ratio_to_zero_shot == pytest.approx(fs.latency_s / zs.latency_s)
    assert 0 <= zs.accuracy <= 1 and fs.mean_prompt_tokens > zs.mean_prompt_tokens
    train, test = split(builtin_task("headline-topic"), 8, seed=0, min_train=4)
    preds = ZeroShot(lm, train).predict(test.inputs)
    assert zs.correct == [is_correct(p, y) for p, y in zip(preds, test.outputs)]  # per item, in test order
    assert sum(fs.correct) / len(fs.correct) == fs.accuracy
    with pytest.raises(ValueError, match="unknown method"):
        evaluate(lm, builtin_task("sentiment"), ["nope"])


def test_hooks_removed_after_exception(lm):
    layer = lm.layers[0]
    with pytest.raises(RuntimeError, match="boom"):
        with hooks(pre=[(layer, lambda m, a: None)], post=[(layer, lambda m, a, o: None)]):
            assert layer._forward_hooks and layer._forward_pre_hooks
            raise RuntimeError("boom")
    assert not layer._forward_hooks and not layer._forward_pre_hooks


def test_eval_cli_on_local_checkpoint(lm, tmp_path, capsys):
    ckpt = tmp_path / "tiny"
    lm.model.save_pretrained(ckpt)
    lm.tokenizer.save_pretrained(ckpt)
    out = tmp_path / "r.json"
    rc = main(["eval", "--data", "emotion", "--model", str(ckpt), "--n-test", "6", "--shots", "4",
               "--json", str(out)])
    assert rc == 0
    table = capsys.readouterr().out
    assert "zero-shot" in table and "few-shot" in table and "x zero-shot" in table
    data = json.loads(out.read_text())
    assert data["task"] == "emotion" and data["n_test"] == 6 and data["seed"] == 0
    assert set(data["methods"]) == {"zero-shot", "few-shot"}
    assert {"accuracy", "latency_s"} <= set(data["methods"]["few-shot"])


def test_cli_reports_bad_data(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("input,output\n")
    assert main(["eval", "--data", str(bad)]) == 2
    assert "no examples found" in capsys.readouterr().err


def test_unknown_model_lists_builtins():
    with pytest.raises(ModelNotFoundError, match="smollm2-135m"):
        load_model("no-such-model-xyz")
