"""Local copies of the seed papers' datasets from local copies of their source repositories: what
`icl-lab data fetch icr-paper --from SOURCES` does, per set (docs/paper-data.md). Kept for the commands in older
notes; the package does the work (icr_app/core/paper_sources.py, icr_app/core/datafetch.py).

    python bench/paper_data.py --sources SOURCES --out $ICL_LAB_DATA [NAME ...]

SOURCES holds one folder per source repository, `owner+name`: a clone (read at the commit pinned in
icr_app/core/paper_sources.py) or the raw files at their paths in the repository.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from icr_app.core.datafetch import fetch
from icr_app.core.paper_sources import SOURCES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="datasets to build (default: every one)")
    ap.add_argument("--sources", type=Path, required=True, help="folder of source repositories, one per owner+name")
    ap.add_argument("--out", type=Path, default=os.environ.get("ICL_LAB_DATA"), help="default: $ICL_LAB_DATA")
    args = ap.parse_args(argv)
    if args.out is None:
        ap.error("give --out or set ICL_LAB_DATA")
    for name in args.names or list(SOURCES):
        fetch(name, dest=args.out, source=args.sources)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
