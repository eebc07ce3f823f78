"""A Redis store that is hostile or broken (issue 28): each answer is bounded as a whole, in time
and in size, however the server paces or pads it, and no password it echoes is printed.

The store is a small RESP server of our own on loopback (a real Redis cannot be made to drip), run
in a thread of this test; the tool sees a Redis."""
import json
import socket
import threading
import time
from pathlib import Path

import pytest

from conftest import popen_tool, tool_env

PASSWORD = "s3cret-pw"
TIMEOUT_S = 2


class HostileRedis:
    """Answers AUTH, MGET (every key absent), SET and PING as Redis would, with a twist: `drip`
    sends every byte of the chosen replies `every` seconds apart; `huge` answers MGET with a 1 GiB
    value, sent as fast as the client reads; `wrongpass` refuses AUTH echoing the password."""

    def __init__(self, mode, every=1.9):
        self.mode, self.every = mode, every
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sent_bytes = 0
        self.stopping = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.talk, args=(conn,), daemon=True).start()

    def talk(self, conn):
        buffer = b""
        try:
            while not self.stopping:
                command, buffer = self.next_command(conn, buffer)
                if command is None:
                    return
                self.answer(conn, command)
        except OSError:
            pass
        finally:
            conn.close()

    @staticmethod
    def next_command(conn, buffer):
        """One RESP array of bulk strings, parsed from what the client sent."""
        while True:
            parsed = HostileRedis.parse(buffer)
            if parsed is not None:
                return parsed
            data = conn.recv(65536)
            if not data:
                return None, buffer
            buffer += data

    @staticmethod
    def parse(buffer):
        if not buffer.startswith(b"*") or b"\r\n" not in buffer:
            return None
        head, rest = buffer.split(b"\r\n", 1)
        args = []
        for _ in range(int(head[1:])):
            if b"\r\n" not in rest:
                return None
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line[1:])
            if len(rest) < size + 2:
                return None
            args.append(rest[:size])
            rest = rest[size + 2:]
        return args, rest

    def answer(self, conn, command):
        name = command[0].upper()
        if name == b"AUTH" and self.mode == "wrongpass":
            return self.send(conn, f"-WRONGPASS invalid password '{PASSWORD}'\r\n".encode())
        if name == b"MGET" and self.mode == "huge":
            return self.send_huge(conn, len(command) - 1)
        if name == b"MGET":
            reply = b"*%d\r\n" % (len(command) - 1) + b"$-1\r\n" * (len(command) - 1)
            return self.send(conn, reply, drip=self.mode in ("drip", "drip-reads"))
        self.send(conn, b"+OK\r\n" if name != b"PING" else b"+PONG\r\n",
                  drip=self.mode in ("drip", "drip-writes") and name == b"SET")

    def send(self, conn, data, drip=False):
        if not drip:
            conn.sendall(data)
            self.sent_bytes += len(data)
            return
        for i in range(len(data)):
            conn.sendall(data[i:i + 1])
            self.sent_bytes += 1
            time.sleep(self.every)

    def send_huge(self, conn, keys):
        size = 1 << 30
        conn.sendall(b"*%d\r\n$%d\r\n" % (keys, size))
        chunk = b"x" * (1 << 20)
        for _ in range(size // len(chunk)):
            conn.sendall(chunk)  # OSError once the client hangs up
            self.sent_bytes += len(chunk)

    def stop(self):
        self.stopping = True
        self.listener.close()

    @property
    def url(self):
        return f"redis://:{PASSWORD}@127.0.0.1:{self.port}"


def run_against(store, tmp_path, venv_python):
    """The demo on one target against `store`; the tool's peak RSS read from /proc as it runs."""
    out = tmp_path / "report.json"
    args = ["check", "--demo", "-t", "cuda:90", "--python", venv_python, "--json", out,
            "--cache-url", store.url, "--cache-timeout", str(TIMEOUT_S)]
    env = tool_env(TRITON_PORTCHECK_HOME=tmp_path / "home")
    started = time.monotonic()
    proc = popen_tool(args, cwd=tmp_path, env=env)
    peak_kib = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kib = max(peak_kib, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    stdout, stderr = proc.communicate()
    store.stop()
    assert proc.returncode == 1, stdout + stderr  # the demo has new failures
    report = json.loads(out.read_text())
    return report["environment"]["remote_cache"], stderr, time.monotonic() - started, peak_kib


@pytest.mark.parametrize("mode", ["drip-reads", "drip-writes"])
def test_a_server_that_drips_costs_one_timeout_per_answer_not_per_byte(mode, tmp_path, venv_python):
    # Before the fix each read waited up to the timeout, so a byte every 1.9 s kept a 2 s timeout
    # from ever firing: 46.8 s reading and 57 s writing on the demo.
    remote, stderr, _, _ = run_against(HostileRedis(mode), tmp_path, venv_python)
    assert remote["remote_errors"] == 1, stderr
    waited = remote["remote_read_seconds"] + remote["remote_write_seconds"]
    assert waited < TIMEOUT_S + 1.5, (remote, stderr)
    assert "no answer within the timeout" in stderr


def test_a_gigabyte_answer_is_refused_while_it_is_read(tmp_path, venv_python):
    # Before the fix the whole value was read before any check: 3.2 GB of RSS for a 1 GiB value.
    store = HostileRedis("huge")
    remote, stderr, _, peak_kib = run_against(store, tmp_path, venv_python)
    assert remote["remote_errors"] == 1 and "an answer larger than 64 MiB" in stderr, stderr
    assert peak_kib < 400 * 1024, peak_kib
    assert store.sent_bytes < 512 << 20  # the tool hung up; it did not read the rest


def test_a_password_the_server_echoes_is_not_printed(tmp_path, venv_python):
    remote, stderr, _, _ = run_against(HostileRedis("wrongpass"), tmp_path, venv_python)
    assert remote["remote_errors"] == 1
    assert "WRONGPASS invalid password '***'" in stderr, stderr
    assert PASSWORD not in stderr
