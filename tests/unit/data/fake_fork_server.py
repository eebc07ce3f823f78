"""A stand-in for portcheck_worker's fork server (python/portcheck_worker/server/server.py), speaking the
same protocol on fds 3/4 but with no Triton: each forked cell reads its request file and does
what it says - "ok" sleeps briefly and exits 0, "kill-server" SIGKILLs this server, as a kernel's
compile-time helper calling os.kill(os.getppid(), 9) would without the real server's per-cell
sitter process. It kills the server by pid, never getppid(): once the server is gone a child's
parent is the test itself (the subreaper)."""
import json
import os
import select
import signal
import time

SERVER = os.getpid()
children = {}


def send(event):
    os.write(4, (json.dumps(event) + "\n").encode())


def run_cell(command):
    os.setsid()
    with open(command["request"]) as f:
        what = f.read().strip()
    time.sleep(0.3)  # so cells overlap and a killer takes its neighbours down with the server
    if what == "kill-server":
        try:
            os.kill(SERVER, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(0)


def reap():
    while children:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        cell = children.pop(pid, None)
        if cell is not None:
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            send({"event": "exited", "id": cell, "pid": pid, "code": code, "signal": sig, "max_rss_bytes": 0})


pending = b""
while True:
    ready, _, _ = select.select([3], [], [], 0.01)
    if ready:
        chunk = os.read(3, 1 << 16)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in filter(None, lines):
            command = json.loads(line)
            if command["op"] == "warm":
                send({"event": "warm", "seconds": 0, "errors": []})
            elif command["op"] == "fork":
                pid = os.fork()
                if pid == 0:
                    run_cell(command)
                children[pid] = command["id"]
                send({"event": "forked", "id": command["id"], "pid": pid, "threads": 1})
            elif command["op"] == "quit":
                raise SystemExit(0)
    reap()
