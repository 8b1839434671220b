"""`python -m services.cli ...`: the riverbeam command (how `riverbeam up` starts services)."""

import sys

from services.cli._entry import run

if __name__ == "__main__":
    run(sys.argv[1:])
