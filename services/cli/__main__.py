"""`python -m services.cli ...`: the riverbeam command (how `riverbeam up` starts services)."""

from services.cli._app import main

if __name__ == "__main__":
    main()
