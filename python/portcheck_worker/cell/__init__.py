"""Runs in a cell's process, where the user's code runs under the cell's limits: the child the
server or a zygote forks (or the `cell` worker of `--isolation process` and the child it forks),
one request handled per cell (compile, inspect, repro), several in a batch. Imports base/,
compile/ and repro/."""
