"""Label words are anchors (Wang et al., EMNLP 2023): information flow and its uses (docs/analyses/anchors.md)."""
