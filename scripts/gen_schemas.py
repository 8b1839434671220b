"""Write schemas/<Type>.json, the JSON Schema of every wire type (riverbeam.types.WIRE_TYPES).

Usage: python scripts/gen_schemas.py [--check] [OUT_DIR]   (default: schemas)

With --check nothing is written; the exit status is 1 when a file is missing, stale or extra.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from riverbeam.types import WIRE_TYPES, json_schema

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"


def render() -> dict[str, str]:
    """The text of every schema file, by file name."""
    return {
        f"{name}.json": json.dumps(json_schema(name), indent=2, ensure_ascii=False) + "\n"
        for name in sorted(WIRE_TYPES)
    }


def differences(out_dir: Path) -> list[str]:
    """What differs between out_dir and the rendered schemas; empty when up to date."""
    wanted = render()
    problems: list[str] = []
    present = {p.name for p in out_dir.glob("*.json")} if out_dir.is_dir() else set()
    for name, text in wanted.items():
        path = out_dir / name
        if name not in present:
            problems.append(f"missing: {path}")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"stale: {path}")
    problems.extend(f"not a wire type: {out_dir / name}" for name in sorted(present - set(wanted)))
    return problems


def write(out_dir: Path) -> None:
    """Write every schema into out_dir and remove the files of types that no longer exist."""
    out_dir.mkdir(parents=True, exist_ok=True)
    wanted = render()
    for stale in out_dir.glob("*.json"):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        (out_dir / name).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", type=Path, default=SCHEMAS)
    parser.add_argument("--check", action="store_true", help="only report differences")
    args = parser.parse_args(argv)
    if args.check:
        problems = differences(args.out_dir)
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    write(args.out_dir)
    if args.out_dir == SCHEMAS:  # riverbeam.yaml's schema lives beside the wire types'
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "gen_config_schema", ROOT / "scripts" / "gen_config_schema.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
