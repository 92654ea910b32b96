"""Prefect flows: wiring of pipeline stages into tasks, nothing else."""
