"""Label words are anchors (Wang et al., EMNLP 2023): information flow and its uses (this folder's README.md)."""
