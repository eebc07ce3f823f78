"""Runs in a cell: the reproducer of a failing cell (`triton-portcheck repro`), the code it
copies from the user's module, and --shrink. Imports compile/ and base/."""
