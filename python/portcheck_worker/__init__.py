"""The part of triton-portcheck that runs inside a Triton environment.

Standard library only: it is put on PYTHONPATH of whichever interpreter holds the Triton under test.
The protocol it speaks with the tool is defined in protocol.schema.json (base/protocol.py reads it).
"""
