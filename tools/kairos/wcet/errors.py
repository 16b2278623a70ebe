"""Errors of the WCET analyser.

Every problem with the input (malformed ELF, unresolved indirect jump,
unbounded loop, bad annotation file …) is reported as a ``WcetError`` whose
message is one line naming the problem and, where there is one, the address.
The command line prints ``kairos wcet: error: <message>`` and exits with 2.
"""

from __future__ import annotations

import os
import sys
from typing import Callable


class WcetError(Exception):
    """A problem with the analysed program or the analyser's input."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class InfeasiblePath(WcetError):
    """The path analysis found no path: the entry restrictions or the
    constraints exclude every one."""


class AnnotationError(WcetError):
    """An annotation that the program contradicts: a stale anchor, or a
    bound the solver refutes.  Never a reason to treat the loop as merely
    unbounded."""


def report_errors(prog: str, run: Callable[[], int]) -> int:
    """Run a command of the analyser's family (`kairos wcet`, `kairos
    latency`): a WcetError or any other exception becomes one line
    `PROG: error: ...` on stderr and exit status 2; an unexpected exception
    is an analyser bug, shown with its traceback when KAIROS_WCET_DEBUG is set."""
    try:
        return run()
    except WcetError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{prog}: error: program structure too deep to analyse (recursion limit)", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        if os.environ.get("KAIROS_WCET_DEBUG"):
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{prog}: error: internal error ({type(exc).__name__}: {msg}); "
              f"set KAIROS_WCET_DEBUG=1 for a traceback", file=sys.stderr)
        return 2
