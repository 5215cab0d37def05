"""ICL as a rank-1 weight update (Dherin et al.): `analysis` checks it, `figures` draws it for the app's tab."""
