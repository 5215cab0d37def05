"""Plotly figures that several methods' views share (the layers × heads map, a placeholder note); the app's own
figures are in `app.figures`."""
