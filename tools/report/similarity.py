"""Near-identical answers between submissions, beyond the released stubs (copydetect).

    python -m tools.report.similarity RELEASE_DIR SUBMISSION_DIR SUBMISSION_DIR ...

Every code answer cell of a submission (nbgrader ``solution`` cells) is fingerprinted with
copydetect (the winnowing of MOSS: the code is tokenized, names become ``V``/``F``, strings
``S``, whitespace and comments go; hashes of every ``k``-gram of the result, one kept per
window). Everything the release already holds -- the stubs (signature, docstring,
``raise NotImplementedError()``) and the given code of every code cell of the released
notebook -- is copydetect's *boilerplate*: its fingerprints are removed from the students'
before anything is compared, so a stub left alone, or given code pasted into an answer,
counts for nothing.

Two submissions are compared cell by cell (the same notebook and ``grade_id``): the copied
code of a cell is the union of the ``k``-grams the two cells share. A submission's score
against another is the copied share of its own fingerprinted code, summed over its cells;
a pair is reported when either side's score reaches ``threshold`` and the two share at least
``min_overlap`` characters of tokenized code (a one-line answer that everyone writes alike is
not a copy). Renamed variables change nothing (names are tokens); reordered independent lines
cost the ``k``-grams across the moved line boundaries only.

A reported pair is a question for the instructor, not a verdict: two students who both
followed the same worked example in the text can be near-identical honestly.
"""

from __future__ import annotations

import argparse
import io
import itertools
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

#: copydetect's noise threshold: the length of a k-gram of tokenized code (copydetect's
#: default is 25, for whole files; answer cells are short, so shorter k-grams)
K = 20
#: winnowing window (copydetect's guarantee threshold - noise threshold + 1); 1 keeps every k-gram
WINDOW = 1
THRESHOLD = 0.5
MIN_OVERLAP = 150


@dataclass
class CellMatch:
    """One answer cell that two submissions share code in."""

    notebook: str
    cell: str
    overlap: int  # characters of tokenized code shared
    share_a: float  # shared share of a's fingerprinted code in this cell
    share_b: float
    source_a: str
    source_b: str
    slices_a: list[tuple[int, int]] = field(default_factory=list)  # copied spans of source_a
    slices_b: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class Pair:
    """Two submissions and what they share."""

    a: str
    b: str
    score_a: float  # copied share of a's answers
    score_b: float
    overlap: int
    cells: list[CellMatch]

    @property
    def score(self) -> float:
        return max(self.score_a, self.score_b)


def _from_copydetect(record: logging.LogRecord) -> bool:
    """False for a record copydetect logs through the root logger (its chatter about skipped
    files), so that only those are dropped, not the root logger's other records."""
    return "copydetect" not in record.pathname.replace("\\", "/").split("/")


def _quiet_copydetect() -> None:
    root = logging.getLogger()
    if _from_copydetect not in root.filters:
        root.addFilter(_from_copydetect)


def answer_cells(folder: Path) -> dict[tuple[str, str], str]:
    """(notebook, grade_id) -> source of every code answer cell of the notebooks in ``folder``."""
    out = {}
    for path in sorted(Path(folder).glob("*.ipynb")):
        try:
            nb = nbformat.read(str(path), as_version=4)
        except Exception:  # an unreadable notebook holds no answer to compare
            continue
        for c in nb.cells:
            meta = c.get("metadata", {}).get("nbgrader", {})
            if c.cell_type == "code" and meta.get("solution") and meta.get("grade_id"):
                out[(path.stem, meta["grade_id"])] = c.source
    return out


class Fingerprints:
    """copydetect fingerprints of answer cells, the release's code removed as boilerplate."""

    def __init__(self, release: Path, k: int = K, window: int = WINDOW) -> None:
        from copydetect import CodeFingerprint

        _quiet_copydetect()
        self.k, self.window, self._fp = k, window, CodeFingerprint
        self.boilerplate: dict[str, set[int]] = {}
        for path in sorted(Path(release).glob("*.ipynb")):
            nb = nbformat.read(str(path), as_version=4)
            hashes: set[int] = set()
            for c in nb.cells:
                if c.cell_type == "code" and c.source.strip():
                    hashes |= {int(h) for h in self._print(c.source, window=1).hashes}
            self.boilerplate[path.stem] = hashes

    def _print(self, source: str, window: int, boilerplate=None):
        return self._fp("cell.py", self.k, window, boilerplate=boilerplate, language="python",
                        fp=io.StringIO(source))

    def cell(self, notebook: str, source: str):
        """The fingerprint of one answer cell (``None`` when nothing is left beyond the release)."""
        from copydetect.utils import get_token_coverage

        boilerplate = self.boilerplate.get(notebook, set())
        try:
            fp = self._print(source, self.window, sorted(boilerplate))
        except Exception:  # copydetect cannot tokenize it: nothing to compare
            return None
        left = {h for h in fp.hashes if int(h) in boilerplate}
        if left:  # copydetect removes one occurrence of a boilerplate k-gram; a repeated one goes too
            fp.hashes -= left
            for h in left:
                fp.hash_idx.pop(h, None)
            fp.token_coverage = get_token_coverage(fp.hash_idx, self.k, len(fp.filtered_code))
        return fp if fp.token_coverage > 0 else None


def _slices(arr) -> list[tuple[int, int]]:
    if len(arr) == 0 or len(arr[0]) == 0:
        return []
    return [(int(s), int(e)) for s, e in zip(arr[0], arr[1])]


def compare_cells(fa, fb, notebook: str, cell: str, source_a: str, source_b: str) -> CellMatch | None:
    from copydetect import compare_files

    overlap, (sa, sb), (sla, slb) = compare_files(fa, fb)
    if overlap == 0:
        return None
    return CellMatch(notebook, cell, int(overlap), float(sa), float(sb), source_a, source_b,
                     _slices(sla), _slices(slb))


class Index:
    """Fingerprints of every submission of an assignment, compared pair by pair."""

    def __init__(self, release: Path, folders: dict[str, Path], k: int = K, window: int = WINDOW) -> None:
        self.fps = Fingerprints(release, k, window)
        self.sources: dict[str, dict[tuple[str, str], str]] = {}
        self.prints: dict[str, dict[tuple[str, str], object]] = {}
        self.coverage: dict[str, int] = {}
        for student, folder in sorted(folders.items()):
            cells = answer_cells(folder)
            prints = {key: self.fps.cell(key[0], src) for key, src in cells.items()}
            self.sources[student] = cells
            self.prints[student] = {key: fp for key, fp in prints.items() if fp is not None}
            self.coverage[student] = sum(fp.token_coverage for fp in self.prints[student].values())

    def shared(self) -> dict[tuple[str, str], int]:
        """(a, b) -> sum over the fingerprints the two share in the same cell of the product of
        their numbers of occurrences, for every pair that shares any (one sparse product: a class
        of hundreds costs a second). It bounds the k-grams either side has in common with the other."""
        import numpy as np
        from scipy.sparse import csr_matrix

        students = sorted(self.prints)
        features: dict[tuple[tuple[str, str], int], int] = {}
        rows, cols, vals = [], [], []
        for i, student in enumerate(students):
            for key, fp in self.prints[student].items():
                for h in fp.hashes:
                    rows.append(i)
                    cols.append(features.setdefault((key, int(h)), len(features)))
                    vals.append(len(fp.hash_idx[h]))  # where the k-gram occurs in the cell
        m = csr_matrix((np.array(vals, dtype=np.int64), (rows, cols)), shape=(len(students), len(features)))
        prod = (m @ m.T).tocoo()
        return {(students[i], students[j]): int(v) for i, j, v in zip(prod.row, prod.col, prod.data) if i < j}

    def pair(self, a: str, b: str) -> Pair:
        cells, over_a, over_b, overlap = [], 0.0, 0.0, 0
        for key in sorted(set(self.prints[a]) & set(self.prints[b])):
            fa, fb = self.prints[a][key], self.prints[b][key]
            m = compare_cells(fa, fb, key[0], key[1], self.sources[a][key], self.sources[b][key])
            if m is None:
                continue
            cells.append(m)
            over_a += m.share_a * fa.token_coverage
            over_b += m.share_b * fb.token_coverage
            overlap += m.overlap
        cells.sort(key=lambda m: -m.overlap)
        return Pair(a, b, over_a / self.coverage[a] if self.coverage[a] else 0.0,
                    over_b / self.coverage[b] if self.coverage[b] else 0.0, overlap, cells)

    def pairs(self, threshold: float = THRESHOLD, min_overlap: int = MIN_OVERLAP) -> list[Pair]:
        """Every pair reaching ``threshold`` with ``min_overlap`` shared, most similar first."""
        k, found = self.fps.k, []
        for (a, b), n in sorted(self.shared().items()):
            # either side's shared k-grams cover at most k * n characters: pairs that cannot
            # reach the threshold or the minimum overlap are not compared
            if k * n < min_overlap or k * n < threshold * min(self.coverage[a], self.coverage[b]):
                continue
            pair = self.pair(a, b)
            if pair.score >= threshold and pair.overlap >= min_overlap:
                found.append(pair)
        return sorted(found, key=lambda p: (-p.score, -p.overlap, p.a, p.b))


def compare(release: Path, folder_a: Path, folder_b: Path, k: int = K, window: int = WINDOW) -> Pair:
    """The similarity of two submission folders (the notebooks of one assignment each)."""
    return Index(release, {"a": Path(folder_a), "b": Path(folder_b)}, k, window).pair("a", "b")


def similar_pairs(release: Path, folders: dict[str, Path], threshold: float = THRESHOLD,
                  min_overlap: int = MIN_OVERLAP, k: int = K, window: int = WINDOW) -> list[Pair]:
    """Pairs of submissions (student -> folder of notebooks) whose answers are near-identical."""
    return Index(release, folders, k, window).pairs(threshold, min_overlap)


HELP = """\
Compare the code answers of submissions pairwise, beyond what the released notebooks already
contain, and print every pair with the share of each one's answers found in the other and the
length of their overlap, most similar first; pairs above the threshold are marked PAIRED.
`make report` shows the same pairs side by side."""

EXAMPLES = """\
examples:
  python -m tools.report.similarity course/release/cnn_lcn course/autograded/*/cnn_lcn
  python -m tools.report.similarity course/release/cnn_lcn course/submitted/*/cnn_lcn --threshold 0.8"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.report.similarity", description=HELP, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("release", type=Path, help="the released notebooks of the assignment")
    p.add_argument("folders", type=Path, nargs="+", help="submission folders (named by their parent: the student)")
    p.add_argument("--threshold", type=float, default=THRESHOLD,
                   help="share of a submission's answers found in the other from which a pair is PAIRED "
                        "(default %(default)s)")
    p.add_argument("--min-overlap", type=int, default=MIN_OVERLAP,
                   help="fewest shared code passages for a pair to be PAIRED (default %(default)s)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    folders = {f.resolve().parent.name if f.name == a.release.name else f.name: f for f in a.folders}
    idx = Index(a.release, folders)
    for pair in sorted((idx.pair(x, y) for x, y in itertools.combinations(sorted(folders), 2)),
                       key=lambda q: -q.score):
        flag = "  PAIRED" if pair.score >= a.threshold and pair.overlap >= a.min_overlap else ""
        print(f"{pair.a:>16s} {pair.b:<16s} {pair.score_a:6.1%} {pair.score_b:6.1%} {pair.overlap:6d}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
