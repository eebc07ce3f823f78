"""Shared by every process of the worker: the protocol with the tool (its files and marks), the
signal guard, the user's at-fork handlers held back while a zygote or a batch's leader imports, a
fork's thread count and a quiet fork(), fault injection for the tests. Standard library only;
imports nothing above it."""
