"""Runs in the fork server (`python -m portcheck_worker serve`): its loop over the tool's commands,
its pool of zygotes and what decides them (the import scan), and the probe - which also runs
alone, in `python -m portcheck_worker probe` (`--isolation process`). No user code runs here.
Imports base/, compile/, forking/ and zygote/ (to start a zygote in the child it forks)."""
