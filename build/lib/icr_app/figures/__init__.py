"""Plotly figures that several methods' tabs share (the layers × heads map, a placeholder note) and the `Say`
every figure builder takes for its words; the app's own figures are in `app.figures`."""
