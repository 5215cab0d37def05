"""ICL state vectors (Li et al., NeurIPS 2024): the heads' outputs at a few-shot prompt's separators, refined by
inner and momentum optimisation (or aggregated group by group), written over a zero-shot query's.

State: in each of the first n layers, what the attention heads output (the input of the output projection) at a
separator token, the last token before an answer. A prompt of k demonstrations and a dummy query gives k + 1
states, S_1 … S_k at the demonstrations' separators and S_{k+1} at the query's; the paper reads them as the
successive parameters of an optimiser, one step per example. Averaged over `n_prompts` prompts, position by
position:
- average: S_{k+1}, the plain state vector (the paper's unoptimised baseline);
- inner (model soup): the uniform mean of the last w states, w = `inner_window` (the paper's code: 7);
- momentum: inner + η · Σ_j β^{age_j} (S_{j+1} − S_j) / Σ_j β^{age_j} over the last `momentum_steps`
  differences between successive demonstrations, the newest of age 0 (the paper's code: weights 1, 2, 4, 8,
  16, i.e. β = 1/2, η = 1);
- divide-conquer (many examples): the examples in groups of `group_size`; a group's vector is the query's
  state after the group as demonstrations, averaged over `repeats` orders; then one prompt of one short dummy
  demonstration per group, each separator carrying its group's vector in every layer, and the aggregate is its
  query's state, averaged over `repeats` dummy queries.
Answering is a zero-shot pass in which the heads' outputs at the last token of layers 0..n−1 are REPLACED by
the vector's (`strength` 1, the paper's `add#0#1`; strength s mixes x + s·(v − x), and 0 is zero-shot to the
bit), so it costs about zero-shot.

The number of edited layers n: the paper fixes it per task and model (a table in its code: 13-15 of Llama-2-7B's
32 layers); here it is the n whose edit gets the most of `val_size` held-out training examples right (first
token, over the labels' first tokens for classification, the vocabulary for open tasks; ties to the higher
mean gold probability), every n scored in one pass per query (`methods.last_token`). In divide-conquer the
groups' vectors are written in every layer; the query's state at layer l only depends on what is written
below l, so the aggregate serves every n.

Decisions where the paper leaves a choice to us:
- A method here learns once from the train split and answers bare queries: the paper's zero-shot setting.
  Its few-shot setting (the vector written into a few-shot prompt) is not offered.
- The paper builds from one 10-shot prompt and one dummy query; we average the trajectories of `n_prompts`
  prompts (class-balanced demonstrations, as every method here), and show the run's `--shots`.
- The separator is the template's: the last token of "Output:" in plain prompts (the paper's "→"), the end
  of the assistant's header in chat prompts.
- A window or step count longer than the trajectory takes what there is; with one demonstration momentum adds
  nothing.
- divide-conquer's dummy demonstrations and queries are drawn from the training examples (the paper keeps a
  separate set); a group's dummy query is never one of its own examples.
- The default mode is the paper's momentum: on a validation group of built-in tasks (emotion, headline-topic,
  sarcasm, past-tense; each task's examples alone, half held out) it was level with the plain average and one
  held-out item ahead of inner on one task (`bench/state_vector_modes.py`, README.md of this folder). Averaging
  the states of 8 prompts rather than the paper's one, for a steadier vector, was not measured against it:
  `state-vector@paper` is the paper's one prompt.
"""

from icr_app.core.strings import folder_strings
from icr_app.methods.base import MethodView
from icr_app.methods.state import stateful_spec
from icr_app.methods.state_vector.method import PAPER, StateVectorConfig, StateVectorMethod, build, neutral

SPEC = stateful_spec(
    StateVectorMethod, title="State vector", config=StateVectorConfig, build=build, kind="implicit", neutral=neutral,
    presets={"paper": PAPER},
    description="the heads' outputs at a few-shot prompt's separators, refined by inner and momentum optimisation, "
                "written over the zero-shot query's in the first layers",
    view=MethodView("sv", "icr_app.methods.state_vector.figures:layer_figure",
                    "icr_app.methods.state_vector.figures:summary"),
    strings=folder_strings(__file__),
)
