"""Plotly figures for the app, one module per view."""
