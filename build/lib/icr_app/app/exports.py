"""Files a visitor downloads: results as JSON (the CLI's format where there is one) and tables as CSV, written
into the visitor's private session folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd


def json_file(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data, indent=2, allow_nan=False))
    return str(path)


def csv_file(path: Path, table: pd.DataFrame) -> str:
    table.to_csv(path, index=False)
    return str(path)
