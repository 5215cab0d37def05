"""The mechanism analyses: label words as anchors (`anchors`) and ICL as a rank-1 weight update (`rank1`)."""
