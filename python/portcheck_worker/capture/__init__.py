"""Runs inside the user's own test process (`triton-portcheck capture`): the hook started by the
generated sitecustomize, the recorder, personas and their vendor stand-ins, the Inductor hook
and the fake GPU. Imports compile/ (the stand-in driver) and base/, never the folders of the
worker's own processes (server/, zygote/, forking/, cell/)."""
