"""Shared machinery: models and their adapter, tasks, prompts, scoring, tracing, attention, artefacts."""
