"""What identifies the analyser for caches of its results.

A result written to disk (``kairos analyze``'s kernel figures) stays valid
only for the analyser that computed it: the same kernel and annotations give
other bounds after a change to the analysis.  The package's version string
does not move with every change, so the identity is the analyser's own code:
a digest of every module of ``kairos.wcet``."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__all__ = ["analyser_fingerprint", "modules_digest"]


def modules_digest(directory: Path) -> str:
    """Hex digest of the names and bytes of the Python modules in
    ``directory`` (not its subdirectories)."""
    h = hashlib.sha256()
    for path in sorted(directory.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@lru_cache(maxsize=1)
def analyser_fingerprint() -> str:
    """``modules_digest`` of this package, once per process."""
    return modules_digest(Path(__file__).parent)
