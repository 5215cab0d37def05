"""Label words are anchors (Wang et al., EMNLP 2023): information flow and its applications, DESIGN.md §3."""
