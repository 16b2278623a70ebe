"""Static WCET analyser (`kairos wcet`) and its trace validation (`kairos trace`).

Pipeline: ``elfimage`` (load ELF) → ``isa`` (decode) → ``cfg`` (basic blocks,
functions, call graph) → ``loops`` (dominators, natural loops) → ``bounds`` /
``annotations`` (loop bounds) → ``valueanalysis`` (data address ranges) →
``microarch`` (cache + pipeline block costs; processor model in ``model``) →
``ipet`` (ILP with HiGHS) → ``report``.
"""

from kairos.wcet.errors import WcetError

__all__ = ["WcetError"]
