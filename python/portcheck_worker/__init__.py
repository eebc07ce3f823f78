"""The part of triton-portcheck that runs inside a Triton environment.

Standard library only: it is put on PYTHONPATH of whichever interpreter holds the Triton under test.
"""

PROTOCOL_VERSION = 1
