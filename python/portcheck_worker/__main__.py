"""Entry point: `python -m portcheck_worker probe|cell REQUEST RESULT [PROGRESS] | serve`.

Exit status 0 means a result file was written (a compile failure is still a result); 3 means
Triton cannot be imported or the request comes from a tool of another protocol (one line on
stderr says which); anything else is a worker problem the supervisor classifies from the exit
status and stderr.
"""
import os
import sys

from .base import channels, messages, protocol
from .cell import child as cell_child
from .server import probe


def _inherit_site():
    """A version environment holds only Triton; the user's other imports (torch, their package)
    come from the invoking interpreter's site-packages, appended *after* this environment's own
    so that its Triton wins."""
    for path in os.environ.get(channels.ENV_INHERIT_SITE, "").split(os.pathsep):
        if path and path not in sys.path:
            sys.path.append(path)


def run(argv):
    if argv[:1] == ["serve"]:
        # Waits: only `serve` loads the fork server's code, a lone probe or cell runs without it.
        # (Triton is imported by the first request, the probe, once it has checked the protocol.)
        from .server import server
        return server.main()
    if len(argv) < 3 or argv[0] not in ("probe", "cell"):
        sys.stderr.write("usage: python -m portcheck_worker probe|cell REQUEST RESULT [PROGRESS] | serve\n")
        return channels.EXIT_USAGE
    command, request_path, result_path = argv[:3]
    if command == "probe":
        request = messages.probe_request(protocol.read_request(request_path))
        protocol.write_result(result_path, probe.handle_probe(request))
        return 0
    # The user's code runs in a child of this process, never in triton-portcheck's own child.
    return cell_child.run_forked(request_path, result_path, argv[3] if len(argv) > 3 else None)


def main(argv):
    _inherit_site()
    try:
        return run(argv)
    except protocol.ProtocolMismatch as e:
        sys.stderr.write(f"portcheck-worker: {e}\n")
        return protocol.EXIT_ENVIRONMENT
    except protocol.ProtocolError as e:
        sys.stderr.write(f"portcheck-worker: {e}\n")
        return protocol.EXIT_BUG


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
