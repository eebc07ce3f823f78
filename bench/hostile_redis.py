"""A hostile Redis for tests and the fault-injection suite (issue 28): a small RESP server of our
own on loopback, in a thread of the caller (a real Redis cannot be made to drip). It answers AUTH,
MGET (every key absent), SET and PING as Redis would, with the twist its mode names."""
import socket
import threading
import time

PASSWORD = "s3cret-pw"


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
