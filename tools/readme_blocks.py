"""The shell blocks of README.md that a test runs verbatim.

A block is marked by an HTML comment on the line before its fence::

    <!-- test: instructor-release -->
    ```bash
    source .venv/bin/activate
    make release
    ```

    python -m tools.readme_blocks            # list the marked blocks
    python -m tools.readme_blocks NAME       # print one (e.g. to pipe into `bash -e`)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
_BLOCK = re.compile(r"^<!-- test: ([\w-]+) -->\n```bash\n(.*?)^```$", re.M | re.S)


def blocks(readme: Path = README) -> dict[str, str]:
    """name -> source of each marked ```bash block, in the order of the README."""
    found: dict[str, str] = {}
    for name, body in _BLOCK.findall(readme.read_text()):
        if name in found:
            raise ValueError(f"{readme}: two blocks marked 'test: {name}'")
        found[name] = body
    return found


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    found = blocks()
    if not argv:
        print("\n".join(found))
        return 0
    if argv[0] not in found:
        print(f"no block marked 'test: {argv[0]}' in {README}; marked: {sorted(found)}", file=sys.stderr)
        return 1
    sys.stdout.write(found[argv[0]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
