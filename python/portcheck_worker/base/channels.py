"""What passes between the tool and the worker outside the JSON messages, by the names the worker
uses: the "x-channels" section of ../protocol.schema.json defines each, and the tool's names are
in src/run/worker_channels.hpp. tests/integration/test_protocol_schema.py holds these names and
the lines the worker writes to that section. capture/vendor_devices.py runs standalone (python -I)
and repeats the two names it reads; the same test holds it to them.

Standard library only, nothing imported: the capture hook reads these in the user's process."""

# The worker's exit codes other than 0 (a result was written).
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3  # Triton does not import, or the tool speaks another protocol
EXIT_BUG = 4  # a message broke the schema though the protocols matched

# Set by the tool for every worker process, and for a version environment's. The run marker is
# carried, never read: the tool's death watch finds the run's processes by it.
ENV_TOOL_PID = "TRITON_PORTCHECK_TOOL_PID"
ENV_RUN_MARKER = "TRITON_PORTCHECK_RUN"
ENV_INHERIT_SITE = "PORTCHECK_INHERIT_SITE"
# Set by the tool for the fork server.
ENV_SERVER_GENERATION = "PORTCHECK_SERVER_GENERATION"
ENV_SERVER_MAX_RSS = "PORTCHECK_SERVER_MAX_RSS"
ENV_SERVER_JOBS = "PORTCHECK_JOBS"
# Set by `capture` for the user's command.
ENV_CAPTURE_DIR = "PORTCHECK_CAPTURE_DIR"
ENV_CAPTURE_MODE = "PORTCHECK_CAPTURE_MODE"
ENV_CAPTURE_HOOK_DIR = "PORTCHECK_CAPTURE_HOOK_DIR"
ENV_CAPTURE_PERSONA = "PORTCHECK_CAPTURE_PERSONA"
ENV_CAPTURE_FAKE_GPU = "PORTCHECK_CAPTURE_FAKE_GPU"

# Set by whoever runs the tool (its tests, a developer), never by the tool: faults to inject
# (base/faults.py), and 0 to run without zygotes (server/server.py).
ENV_INJECT = "TRITON_PORTCHECK_INJECT"
ENV_ZYGOTES = "TRITON_PORTCHECK_ZYGOTES"

# A cell's progress file: "stage NAME" lines, and the marks --isolation process's parent leaves
# around the life of the child that runs the cell (cell/child.py): a parent that died after the
# first and before the second was killed by that child.
STAGE_PREFIX = "stage "
MARK_CHILD_FORKED = "cell-parent forked"
MARK_CHILD_ENDED = "cell-parent child-ended"

# A batch's log: "begun|done CELL_ID SECONDS FIGURE"; the tool's stop file beside it.
BATCH_BEGUN = "begun"
BATCH_DONE = "done"
BATCH_STOP_SUFFIX = ".stop"
