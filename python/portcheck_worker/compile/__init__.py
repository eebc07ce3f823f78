"""Runs in a cell (a process forked for one compile): Triton's stages, the static pre-checks,
the compile key, target support, the cubin's resources, the stand-in driver and the loader of
the user's module. Imports only base/."""
