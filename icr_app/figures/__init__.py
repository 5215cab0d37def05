"""Plotly figures that several methods' tabs share (the layers × heads map, a placeholder note); the app's own
figures are in `app.figures`."""
