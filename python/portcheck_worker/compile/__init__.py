"""Triton's compile pipeline as a library, with no process of its own: the stages, the static
pre-checks, the compile key, target support, the cubin's resources, the stand-in driver and the
loader of the user's module. Called by the processes that compile or read Triton (a cell, the
warm-up of the server and zygotes, the probe); it never forks, reads a channel or writes a result.
Imports only base/."""
