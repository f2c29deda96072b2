"""python -m vmafx: the vmafx command line (the `vmaf` tool's flags)."""

import sys

from ._vmafx import cli_main

sys.exit(cli_main(["vmafx", *sys.argv[1:]]))
