"""The fork of a cell, on both sides: what the fork server and its zygotes share to fork one (the
channel between them, the warm-up, the heap freeze, reaping) and the forked child's first lines
before its cell runs (its session, its files, the user's at-fork handlers). Imports base/,
compile/ and cell/."""
