"""`data fetch`: bring a dataset the tests or the benchmarks read into $ICL_LAB_DATA (docs/paper-data.md)."""

from __future__ import annotations

import argparse
from functools import partial

from icr_app.cli.flags import command, tqdm_progress
from icr_app.core.datafetch import RAW_URL, dataset_names, fetch


def cmd_fetch(args: argparse.Namespace) -> int:
    dest = fetch(args.name, dest=args.dest, source=args.source, base_url=args.base_url,
                 progress=partial(tqdm_progress, leave=True))
    print(f"{args.name}: in {dest}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    data = command(sub, "data", "the datasets the tests and benchmarks read")
    fetch_parser = command(
        data.add_subparsers(dest="data_command", required=True, metavar="COMMAND"), "fetch",
        "bring NAME (fv, icr-paper, i2cl-paper, or one paper set) into $ICL_LAB_DATA from its public source, "
        "checked against the pinned files",
        "icl-lab data fetch fv", "icl-lab data fetch icr-paper --dest ~/icl-data",
        "icl-lab data fetch fv --from ./function_vectors")
    fetch_parser.add_argument("name", choices=dataset_names(), metavar="NAME",
                              help=f"what to bring: {', '.join(dataset_names())}")
    fetch_parser.add_argument("--from", dest="source", default=None, metavar="DIR",
                              help="copy from a local folder instead of downloading: for fv, the task files (or a "
                                   "clone of the authors' repository); for the paper sets, one folder per source "
                                   "repository, owner+name (a clone, or its files at their paths)")
    fetch_parser.add_argument("--dest", default=None, metavar="DIR",
                              help="where to put it (default: $ICL_LAB_DATA, else the user's data folder)")
    fetch_parser.add_argument("--base-url", default=RAW_URL, metavar="URL",
                              help="where raw files are downloaded from, as URL/owner/name/commit/path (a mirror "
                                   "of GitHub's raw files)")
    fetch_parser.set_defaults(func=cmd_fetch)
