"""ICL Lab: zero-shot, few-shot and implicit in-context learning (SITE, ICR) side by side."""

__version__ = "0.1.0"
