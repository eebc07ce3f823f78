"""Runs in the fork server and its zygotes (`python -m portcheck_worker serve`): the server, the
zygotes, the cell child and the handlers of its requests. Imports compile/ and base/."""
