"""A real Redis and a real nginx with WebDAV on loopback, for the shared-cache benchmark and the
integration tests (Debian: redis-server, nginx). Each runs in the foreground of a child process
with all its files in one folder, on a free port, and is stopped (and waited for) on exit.

    with RedisServer(tmp) as redis, WebDavServer(tmp) as dav:
        redis.url  # redis://127.0.0.1:PORT
        dav.url    # http://127.0.0.1:PORT/cache
"""
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing_servers():
    """The Debian packages the servers need that this machine lacks."""
    wanted = {"redis-server": "redis-server", "nginx": "nginx"}
    return [package for program, package in wanted.items()
            if not shutil.which(program) and not Path("/usr/sbin", program).exists()]


class Server:
    name = "server"

    def __init__(self, folder):
        self.folder = Path(folder) / f"{self.name}-{os.getpid()}-{free_port()}"
        self.folder.mkdir(parents=True)
        self.port = free_port()
        self.process = None

    def argv(self):
        raise NotImplementedError

    def start(self):
        log = open(self.folder / "log.txt", "w")
        self.process = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {(self.folder / 'log.txt').read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} did not listen on {self.port}")

    def kill(self):
        """Dead at once, as a crashed or OOM-killed server: its connections are reset."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def pause(self):
        """Stopped, not dead: it accepts connections and never answers (a hung server)."""
        os.killpg(self.process.pid, signal.SIGSTOP)

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGCONT)
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class RedisServer(Server):
    name = "redis"

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def argv(self):
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
        return [server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.folder), "--daemonize", "no"]

    def cli(self, *args, stdin=None):
        client = shutil.which("redis-cli") or "/usr/bin/redis-cli"
        return subprocess.run([client, "-p", str(self.port), *args], capture_output=True,
                              text=True, check=True, input=stdin).stdout

    def stored_count(self):
        """Cheap enough to poll while a benchmark runs: one command, no per-key work."""
        return int(self.cli("DBSIZE").strip())

    def stored_bytes(self):
        keys = [k for k in self.cli("--scan", "--pattern", "triton-portcheck:*").split() if k]
        sizes = self.cli(stdin="".join(f"STRLEN {k}\n" for k in keys)).split() if keys else []
        return len(keys), sum(int(size) for size in sizes)

    def entries(self):
        """(name, text) of every entry the tool stored."""
        keys = sorted(self.cli("--scan", "--pattern", "triton-portcheck:*").split())
        return [(key, self.cli("GET", key).rstrip("\n")) for key in keys]

    def put(self, name, text):
        self.cli("SET", name, text)


class WebDavServer(Server):
    """nginx's WebDAV module: GET and PUT of one file per key under <root>/cache."""
    name = "nginx"

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/cache"

    @property
    def store(self):
        return self.folder / "root" / "cache"

    def argv(self):
        (self.folder / "root" / "cache").mkdir(parents=True)
        (self.folder / "temp").mkdir()
        temp = self.folder / "temp"
        user = "user root;\n" if os.geteuid() == 0 else ""  # workers must write the store
        (self.folder / "nginx.conf").write_text(f"""{user}worker_processes 1;
daemon off;
pid {self.folder}/nginx.pid;
error_log {self.folder}/error.log warn;
events {{ worker_connections 512; }}
http {{
  access_log off;
  client_body_temp_path {temp}/body;
  proxy_temp_path {temp}/proxy;
  fastcgi_temp_path {temp}/fastcgi;
  uwsgi_temp_path {temp}/uwsgi;
  scgi_temp_path {temp}/scgi;
  server {{
    listen 127.0.0.1:{self.port};
    root {self.folder}/root;
    location /cache/ {{
      dav_methods PUT DELETE;
      create_full_put_path on;
      client_max_body_size 64m;
    }}
  }}
}}
""")
        server = shutil.which("nginx") or "/usr/sbin/nginx"
        return [server, "-e", str(self.folder / "error.log"), "-p", str(self.folder),
                "-c", str(self.folder / "nginx.conf")]

    def stored_count(self):
        return sum(1 for _ in self.store.iterdir())

    def stored_bytes(self):
        files = [p for p in self.store.iterdir() if p.is_file()]
        return len(files), sum(p.stat().st_size for p in files)

    def entries(self):
        """(name, text) of every entry the tool stored."""
        return [(path.name, path.read_text()) for path in sorted(self.store.iterdir()) if path.is_file()]

    def put(self, name, text):
        (self.store / name).write_text(text)


def resealed(entry):
    """A cache entry (a dict) as text, its checksum made again as the tool makes it (sha1 of its
    compact dump without the checksum): what anyone who can write to a store can do. Its floats
    become integers first: the tool's JSON writer and Python's can spell one float differently
    (both round-trip, not always with the same digits), an integer they spell alike."""
    def whole(value):
        if isinstance(value, float):
            return int(value)
        if isinstance(value, dict):
            return {k: whole(v) for k, v in value.items()}
        if isinstance(value, list):
            return [whole(v) for v in value]
        return value

    entry = {k: whole(v) for k, v in entry.items() if k != "checksum"}
    dump = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    entry["checksum"] = hashlib.sha1(dump.encode()).hexdigest()
    return json.dumps(entry)
