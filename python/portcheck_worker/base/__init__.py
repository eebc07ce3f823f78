"""Shared by every process of the worker: the protocol with the tool (its files and marks), the
signal guard, fault injection for the tests. Standard library only; imports nothing above it."""
