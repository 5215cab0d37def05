"""The page in two languages: every string in both, every key the code asks for there, the visitor's language
read from the request, the backend's messages and the task notes in Chinese, and the served page through HTTP."""

import json
import re
import string
from pathlib import Path
from types import SimpleNamespace

import pytest
from gradio.context import LocalContext
from gradio_client import Client, handle_file
from helpers import BAD_UPLOADS

from icr_app.analyses.anchors.cached import EXPERIMENTS
from icr_app.app import launch
from icr_app.app.i18n import CHINESE, COOKIE, ENGLISH, language
from icr_app.app.messages import translated_error
from icr_app.app.strings import strings
from icr_app.app.task_notes import task_note
from icr_app.core.errors import MESSAGES, UserError
from icr_app.core.tasks import TaskError, builtin_names, builtin_task, parse_task_bytes
from icr_app.methods import REGISTRY
from icr_app.methods.base import BuildError, MethodView

EN = strings()["en"]
ZH = strings()["zh-CN"]

PACKAGE = Path(__file__).parents[1] / "icr_app"
# t("key") and say("key", ...) with a literal key, or an f-string key such as f"method.{name}"
USED = re.compile(r"\b(?:t|say)\(\s*(f?)\"([^\"]+)\"")
HAN = re.compile("[\u4e00-\u9fff]")


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_key_has_both_languages_with_the_same_fields():
    assert set(strings()) == {ENGLISH, CHINESE}
    assert set(EN) == set(ZH), set(EN) ^ set(ZH)
    for key in EN:
        assert EN[key].strip() and ZH[key].strip(), key
        assert _fields(EN[key]) == _fields(ZH[key]), key
        assert HAN.search(ZH[key]), f"{key} is not translated"


def test_every_key_the_code_asks_for_exists():
    """Literal keys by reading the code; the keys built from a name (f"method.{name}") for every such name."""
    literal, families = set(), set()
    for path in PACKAGE.rglob("*.py"):
        for is_f, key in USED.findall(path.read_text()):
            (families if is_f and "{" in key else literal).add(key.split("{")[0] if is_f else key)
    assert literal and literal <= set(EN), literal - set(EN)
    named = {"method.": list(REGISTRY), "kind.": {s.kind for s in REGISTRY.values()},
             "download.": [name for name, spec in REGISTRY.items() if spec.view is not None], "anchors.": EXPERIMENTS,
             "": [key for spec in REGISTRY.values() if spec.view for key in view_keys(spec.view)], "error.": MESSAGES}
    assert families <= set(named), families - set(named)
    for prefix in families | {"method."}:  # method titles go through i18n.method_title / method_label
        assert {prefix + name for name in named[prefix]} <= set(EN), prefix


def view_keys(view: MethodView) -> list[str]:
    """The keys a method's tab asks for, named by its view (`app.built_tab`)."""
    parts = ["tab", "explain", *(["figure"] if view.figure else []), *(["second"] if view.second else [])]
    build = [view.build.label, view.build.button, view.build.upload, view.build.busy] if view.build else []
    return [f"{view.key}.{part}" for part in parts] + build + list(view.query.labels if view.query else ())


def _request(headers: dict[str, str]):
    return SimpleNamespace(headers=headers)


@pytest.mark.parametrize("headers, expected", [
    ({}, ENGLISH),
    ({"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"}, CHINESE),
    ({"accept-language": "en-US,en;q=0.9,zh-CN;q=0.8"}, ENGLISH),
    ({"accept-language": "fr-FR,fr;q=0.9,zh;q=0.5"}, CHINESE),
    ({"accept-language": "de-DE,fr;q=0.9"}, ENGLISH),
    ({"accept-language": "zh-CN", "cookie": f"other=1; {COOKIE}=en"}, ENGLISH),
    ({"accept-language": "en", "cookie": f"{COOKIE}=zh-CN"}, CHINESE),
    ({"accept-language": "zh-CN", "cookie": f"{COOKIE}=klingon"}, CHINESE),
])
def test_the_visitors_language(headers, expected):
    assert language(_request(headers)) == expected


def test_outside_a_request_the_page_speaks_english():
    assert language() == ENGLISH


def in_language(lang: str, err: Exception) -> str:
    """`err` as the page tells it to a visitor who chose `lang`."""
    token = LocalContext.request.set(_request({"cookie": f"{COOKIE}={lang}"}))
    try:
        return translated_error(err)
    finally:
        LocalContext.request.reset(token)


@pytest.mark.parametrize("name, data, _", BAD_UPLOADS)
def test_every_bad_upload_message_has_its_chinese(name, data, _):
    with pytest.raises(TaskError) as err:
        parse_task_bytes(data, name)
    english, chinese = str(err.value), in_language(CHINESE, err.value)
    assert in_language(ENGLISH, err.value) == english
    assert chinese != english and HAN.search(chinese)
    assert (name in english) == (name in chinese)  # the details are kept: which file


def test_every_error_code_has_a_chinese_template_with_the_english_ones_placeholders():
    for code, english in MESSAGES.items():
        assert EN[f"error.{code}"] == english
        assert _fields(ZH[f"error.{code}"]) == _fields(english), code


def test_the_page_translates_the_code_not_the_english(monkeypatch):
    """Rewording an English message keeps its Chinese; an error with no code is shown as it is, and a method that
    could not be built says why in the visitor's language."""
    monkeypatch.setitem(MESSAGES, "task.empty_file", "{file} holds nothing at all")
    err = TaskError("task.empty_file", file="a.csv")
    assert str(err) == "a.csv holds nothing at all"
    assert in_language(CHINESE, err) == ZH["error.task.empty_file"].format(file="a.csv")
    assert in_language(CHINESE, ValueError("no code")) == "no code"
    assert in_language(CHINESE, BuildError("site", err)) == in_language(CHINESE, err)
    with pytest.raises(KeyError, match="no message for error code"):
        UserError("task.no_such_code")


def test_a_chinese_task_on_an_english_only_model_says_why_it_is_weak(lm):
    """The tiny model's byte-level English vocabulary spends three tokens on a Chinese character; a vocabulary
    with one token per character (as a multilingual model's) gets no note, nor does an English task."""
    task = builtin_task("zh-review-sentiment")
    assert "splits each Chinese character into 3.0 tokens" in task_note(lm, task, "described")
    assert task_note(lm, builtin_task("sentiment"), "described") == "described"
    per_character = SimpleNamespace(name="multilingual", tokenizer=lambda text, **_: {"input_ids": list(text)})
    assert task_note(per_character, task, "described") == "described"


def test_chinese_builtin_tasks():
    """Written by the project like the English ones: a two-label review sentiment, a four-topic news
    classification and an open antonym task, each big enough and with no repeated input."""
    kinds = {name: builtin_task(name) for name in builtin_names() if name.startswith("zh-")}
    assert {n: (t.kind, len(t.labels)) for n, t in kinds.items()} == {
        "zh-review-sentiment": ("classification", 2), "zh-news-topic": ("classification", 4),
        "zh-antonyms": ("open", 48)}
    for task in kinds.values():
        assert all(HAN.search(x) and HAN.search(y) for x, y in zip(task.inputs, task.outputs))


@pytest.fixture(scope="module")
def server(lm):
    demo = launch(lm, prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    yield demo
    demo.close()


def test_the_served_page_carries_both_languages_and_answers_in_the_visitors(server, tmp_path):
    assert server.config["i18n_translations"] == strings()
    chinese = Client(server.local_url, verbose=False, headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    described = chinese.predict("zh-news-topic", api_name="/load_builtin")[1]  # after the table
    assert "48 个示例；4 个标签的分类" in described and "平均把每个汉字切成" in described
    bad = tmp_path / "one.csv"
    bad.write_text("input,output\n" + "".join(f"{c},x\n" for c in "abcdefgh"))
    with pytest.raises(Exception, match="每个示例的标签都是“x”"):
        chinese.predict(handle_file(str(bad)), api_name="/load_upload")
    chose_english = Client(server.local_url, verbose=False,
                           headers={"Accept-Language": "zh-CN", "Cookie": f"{COOKIE}=en"})
    with pytest.raises(Exception, match="every example has the label 'x'"):
        chose_english.predict(handle_file(str(bad)), api_name="/load_upload")


def test_a_figure_the_page_sends_is_drawn_in_the_visitors_language(server):
    """A method built on the page for a visitor reading Chinese: its tab's figure comes back in Chinese."""
    chinese = Client(server.local_url, verbose=False, headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    chinese.predict("sentiment", api_name="/load_builtin")
    head_map = json.loads(chinese.predict(20, 0, api_name="/build_site")[0]["plot"])["layout"]
    assert "SITE 在 sentiment 上选出的注意力头" in head_map["title"]["text"]
    assert (head_map["xaxis"]["title"]["text"], head_map["yaxis"]["title"]["text"]) == ("注意力头", "层")


def test_the_batch_table_is_headed_in_the_visitors_language(server):
    chinese = Client(server.local_url, verbose=False, headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    table = chinese.predict("great\nawful", 4, 0, ["zero-shot"], api_name="/answer_batch")
    assert table["headers"] == ["模型", "查询", "zero-shot"] and [row[1] for row in table["data"]] == ["great", "awful"]


def test_a_file_for_another_model_and_a_missing_router_are_told_in_chinese(lm, tmp_path):
    """The other messages a visitor meets on the page: an uploaded method file made for another model, a
    truncated one, and a model with no shipped ICR router (the ICR panel says so)."""
    from tiny import tiny_lm

    from icr_app.core.artefacts import ArtefactError
    from icr_app.methods import build_method
    from icr_app.methods.icr.router import pretrained_folder
    from icr_app.methods.site.method import SiteConfig, SiteMethod

    other = tiny_lm(n_layers=2)
    site = build_method(other, builtin_task("sentiment"), "site", SiteConfig(n_prompts=4, n_demos=2, steps=2))
    path = site.save(tmp_path / "other.safetensors")
    with pytest.raises(ArtefactError) as wrong_model:
        SiteMethod.load(path, lm)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ArtefactError) as truncated:
        SiteMethod.load(path, lm)
    with pytest.raises(ArtefactError) as no_router:
        pretrained_folder(lm)
    for err, kept in ((wrong_model, other.fingerprint), (truncated, "other.safetensors"), (no_router, lm.name)):
        chinese = in_language(CHINESE, err.value)
        assert HAN.search(chinese) and kept in chinese, str(err.value)
