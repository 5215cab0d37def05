"""Label words are anchors (Wang et al., EMNLP 2023): information flow and its uses (icr_app/analyses/anchors/README.md)."""
