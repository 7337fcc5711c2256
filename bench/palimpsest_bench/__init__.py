"""Benchmarks and evaluation harnesses; run through `palimpsest bench` and `palimpsest eval`."""
