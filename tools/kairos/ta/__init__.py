"""Timed-automata models of reservation schedulers: the UPPAAL XML subset,
digitised model checking with SPIN, and the scheduler model library
(docs/timed-automata.md)."""
