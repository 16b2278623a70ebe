"""Errors of the WCET analyser.

Every problem with the input (malformed ELF, unresolved indirect jump,
unbounded loop, bad annotation file …) is reported as a ``WcetError`` whose
message is one line naming the problem and, where there is one, the address.
The command line prints ``kairos wcet: error: <message>`` and exits with 2.
"""

from __future__ import annotations


class WcetError(Exception):
    """A problem with the analysed program or the analyser's input."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))
