"""Kairos host tools: the boot runner, the WCET analyser and the system tools."""

__version__ = "0.1.0"
