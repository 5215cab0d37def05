import random
from collections import Counter

import pytest

from icr_app.core.prompts import Template
from icr_app.core.tasks import builtin_task, sample_demos


def test_template_formats():
    t = Template()
    assert t.zero_shot("hi") == "Input: hi\nOutput:"
    task = builtin_task("sentiment")
    demos = list(task.examples[:2])
    p = t.few_shot(demos, "q")
    assert p.startswith(f"Input: {demos[0].input}\nOutput: {demos[0].output}\n\n")
    assert p.endswith("Input: q\nOutput:")
    with pytest.raises(ValueError, match="{x}"):
        Template(query="no slot")


def test_demos_class_balanced_seeded_and_exclude_query():
    task = builtin_task("headline-topic")
    q = task.inputs[0]
    a = sample_demos(task, 8, random.Random(1), exclude_input=q)
    b = sample_demos(task, 8, random.Random(1), exclude_input=q)
    assert a == b
    assert q not in [d.input for d in a]
    assert set(Counter(d.output for d in a).values()) == {2}


def test_demos_open_task_count():
    task = builtin_task("antonyms")
    assert len(sample_demos(task, 5, random.Random(0))) == 5
    assert len(sample_demos(task.subset([0, 1, 2]), 10, random.Random(0))) == 3
