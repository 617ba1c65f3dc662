"""The shell blocks of README.md that a test runs verbatim.

A block is marked by an HTML comment on the line before its fence::

    <!-- test: instructor-release -->
    ```bash
    source .venv/bin/activate
    make release
    ```

    python -m tools.build.readme_blocks            # list the marked blocks
    python -m tools.build.readme_blocks NAME       # print one (e.g. to pipe into `bash -e`)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"^<!-- test: ([\w-]+) -->\n```bash\n(.*?)^```$", re.M | re.S)


def blocks(readme: Path = README) -> dict[str, str]:
    """name -> source of each marked ```bash block, in the order of the README."""
    found: dict[str, str] = {}
    for name, body in _BLOCK.findall(readme.read_text()):
        if name in found:
            raise ValueError(f"{readme}: two blocks marked 'test: {name}'")
        found[name] = body
    return found


HELP = """\
Print the shell blocks of README.md that the tests run verbatim: a block is marked by an
HTML comment <!-- test: NAME --> on the line before its ```bash fence. Without a name, list
the marked blocks."""

EXAMPLES = """\
examples:
  python -m tools.build.readme_blocks                                   # the names of the marked blocks
  python -m tools.build.readme_blocks instructor-release | bash -e      # run one as the tests do"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.build.readme_blocks",
                                description=HELP,
                                epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", help="the block to print (default: list the names of every marked block)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    found = blocks()
    if not a.name:
        print("\n".join(found))
        return 0
    if a.name not in found:
        print(f"no block marked 'test: {a.name}' in {README}; marked: {sorted(found)}", file=sys.stderr)
        return 1
    sys.stdout.write(found[a.name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
