"""Write schemas/config/riverbeam.schema.json, the JSON Schema of riverbeam.yaml.

Usage: python scripts/gen_config_schema.py [--check]

It comes from the pydantic model (riverbeam.agents.RiverbeamConfig); with --check nothing is
written and the exit status is 1 when the file is missing or stale. gen_schemas.py runs it too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from riverbeam.agents import config_json_schema

ROOT = Path(__file__).resolve().parent.parent
PATH = ROOT / "schemas" / "config" / "riverbeam.schema.json"


def render() -> str:
    return json.dumps(config_json_schema(), indent=2, ensure_ascii=False) + "\n"


def stale(path: Path = PATH) -> bool:
    """Whether the file is missing or differs from the model's schema."""
    return not path.is_file() or path.read_text(encoding="utf-8") != render()


def write(path: Path = PATH) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report a stale file")
    args = parser.parse_args(argv)
    if args.check:
        if stale():
            print(f"stale: {PATH} (run python scripts/gen_config_schema.py)", file=sys.stderr)
            return 1
        return 0
    write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
