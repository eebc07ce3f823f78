"""The shared remote cache against a real Redis and a real nginx with WebDAV on loopback
(bench/remote_servers.py starts and stops them): runs with empty local homes compile each cell
once in all, a remote killed or hung mid-run costs at most its timeout and loses nothing, a
tampered entry is ignored and replaced, read-only writes nothing, and every way of naming the
cache is checked like the rest of the input."""
import json
import re
import sys
import time

import pytest

from conftest import REPO, cells_by_position, run_tool, popen_tool, tool_env, write_manifest

sys.path.insert(0, str(REPO / "bench"))
from remote_servers import RedisServer, WebDavServer, missing_servers, resealed  # noqa: E402

TARGETS = "cuda:90,hip:gfx942"  # 18 cells of the demo: every verdict kind, a few seconds
SERVERS = {"redis": RedisServer, "http": WebDavServer}

if missing_servers():
    pytest.skip("the remote cache tests need " + ", ".join(missing_servers()) + " (make deps)",
                allow_module_level=True)


@pytest.fixture(params=sorted(SERVERS))
def server(request, tmp_path):
    with SERVERS[request.param](tmp_path) as running:
        yield running


def check(tmp_path, name, url, venv_python, *extra, targets=TARGETS, **env):
    home = tmp_path / f"home-{name}"
    out = tmp_path / f"{name}.json"
    args = ["check", "--demo", *(["-t", targets] if targets else []), "--python", venv_python, "--json", out, *extra]
    if url is not None:
        args += ["--cache-url", url]
    run = run_tool(args, cwd=tmp_path, TRITON_PORTCHECK_HOME=home, **env)
    assert run.returncode == 1, run.stdout + run.stderr  # the demo has new failures
    report = json.loads(out.read_text())
    return run, report, report["environment"].get("remote_cache")


def verdicts(report):
    return {k: (c["status"], c.get("kind"), c.get("fingerprint")) for k, c in cells_by_position(report).items()}


def remote_lines(stderr):
    return [line for line in stderr.splitlines() if "remote cache" in line]


def test_two_empty_homes_sharing_one_store_compile_each_cell_once(server, tmp_path, venv_python):
    _, first, first_remote = check(tmp_path, "first", server.url, venv_python)
    cells = len(first["cells"])
    assert first_remote["misses"] == cells and first_remote["remote_stored"] == cells
    assert server.stored_bytes()[0] == cells

    run, second, second_remote = check(tmp_path, "second", server.url, venv_python)
    assert second_remote["remote_hits"] == cells, run.stderr
    assert second_remote["misses"] == 0 and second_remote["remote_stored"] == 0
    assert second["summary"]["from_cache"] == cells
    assert verdicts(second) == verdicts(first)
    assert f"{cells} hits there, 0 in the local cache, 0 misses" in run.stderr

    # The second home now has them locally: a third run there asks the remote nothing.
    _, _, third_remote = check(tmp_path, "second", server.url, venv_python)
    assert third_remote["local_hits"] == cells and third_remote["remote_hits"] == 0
    assert third_remote["remote_read_seconds"] == 0


def test_a_remote_killed_mid_run_loses_nothing(server, tmp_path, venv_python, demo_run):
    """The whole demo (81 cells, seconds): writes go in batches (32 cells, or what waited a second),
    so the store holds some results well before the run ends."""
    home = tmp_path / "home-killed"
    out = tmp_path / "killed.json"
    env = tool_env(TRITON_PORTCHECK_HOME=home)
    proc = popen_tool(["check", "--demo", "--python", venv_python, "--json", out, "--cache-url", server.url, "-j", "2"],
                      cwd=tmp_path, env=env)
    deadline = time.monotonic() + 120
    while server.stored_count() < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before the remote could be killed"
    server.kill()
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stdout + stderr
    report = json.loads(out.read_text())
    remote = report["environment"]["remote_cache"]
    assert verdicts(report) == verdicts(demo_run.report)  # the session's --no-cache run of the demo
    assert remote["remote_errors"] == 1 and 3 <= remote["remote_stored"] < len(report["cells"])
    assert remote["stored"] == len(report["cells"])  # every result is in the local cache
    failed = [line for line in remote_lines(stderr) if "failed" in line and "local cache only" in line]
    assert len(failed) == 1, stderr  # reported once
    _, again, _ = check(tmp_path, "killed", "none", venv_python, targets=None)
    assert again["summary"]["from_cache"] == len(report["cells"])


def test_a_hung_remote_costs_at_most_its_timeout(server, tmp_path, venv_python):
    server.pause()  # accepts connections, never answers
    run, report, remote = check(tmp_path, "hung", server.url, venv_python, "--cache-timeout", "1")
    waited = remote["remote_read_seconds"] + remote["remote_write_seconds"]
    assert 0.9 <= waited <= 1.5, remote
    assert remote["remote_errors"] == 1 and remote["remote_skipped"] == len(report["cells"])
    assert len(remote_lines(run.stderr)) == 2, run.stderr  # the failure, then the summary


def test_a_full_redis_stops_the_writes_and_the_run_goes_on(tmp_path, venv_python):
    with RedisServer(tmp_path) as redis:
        _, reference, _ = check(tmp_path, "fill", redis.url, venv_python)
        used = int(re.search(r"used_memory:(\d+)", redis.cli("INFO", "memory")).group(1))
        redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction")
        redis.cli("CONFIG", "SET", "maxmemory", str(used + 1024))
        run, report, remote = check(tmp_path, "full", redis.url, venv_python, targets="cuda:80,hip:gfx942")
        assert "writing failed (OOM command not allowed" in run.stderr, run.stderr
        assert "this run stores its results in the local cache only" in run.stderr
        assert remote["remote_errors"] == 1 and remote["remote_stored"] == 0
        # Reads went on: the hip:gfx942 cells came from the store, the cuda:80 ones were compiled.
        assert remote["remote_hits"] == len(report["cells"]) // 2 == remote["misses"]
        assert remote["stored"] == remote["misses"]


def tamper(server):
    """Changes one stored entry's content and keeps its checksum field, as a poisoned cache would."""
    if isinstance(server, RedisServer):
        key = sorted(server.cli("--scan", "--pattern", "triton-portcheck:*").split())[0]
        text = server.cli("GET", key).rstrip("\n")
        server.cli("SET", key, re.sub(r'"wall_s":[0-9.e-]+', '"wall_s":0.001', text))
        return key.split(":", 1)[1]
    path = sorted(server.store.iterdir())[0]
    path.write_text(re.sub(r'"wall_s":[0-9.e-]+', '"wall_s":0.001', path.read_text()))
    return path.name


def test_a_tampered_remote_entry_is_ignored_and_replaced(server, tmp_path, venv_python):
    _, first, _ = check(tmp_path, "first", server.url, venv_python)
    key = tamper(server)
    run, second, remote = check(tmp_path, "second", server.url, venv_python)
    cells = len(first["cells"])
    assert remote["remote_rejected"] == 1 and remote["remote_hits"] == cells - 1, run.stderr
    assert remote["misses"] == 1 and remote["remote_stored"] == 1
    assert f"ignoring an entry of remote cache {server.url} (key {key}: its checksum does not match" in run.stderr
    assert verdicts(second) == verdicts(first)
    _, _, third = check(tmp_path, "third", server.url, venv_python)
    assert third["remote_hits"] == cells and third["remote_rejected"] == 0


def test_read_only_reads_what_trusted_runs_stored_and_writes_nothing(server, tmp_path, venv_python):
    _, _, remote = check(tmp_path, "pull-request", server.url, venv_python, "--cache-readonly")
    assert remote["readonly"] and remote["remote_stored"] == 0 and remote["remote_skipped"] == 0
    assert server.stored_bytes()[0] == 0
    check(tmp_path, "trusted", server.url, venv_python)
    run, _, remote = check(tmp_path, "pull-request-2", server.url, venv_python,
                           TRITON_PORTCHECK_CACHE_READONLY="1")
    assert remote["readonly"] and remote["misses"] == 0 and remote["remote_hits"] > 0
    assert "(read-only)" in run.stderr


def test_the_url_comes_from_the_flag_then_the_environment_then_the_manifest(tmp_path, venv_python):
    with RedisServer(tmp_path) as manifests, RedisServer(tmp_path) as environments:
        demo = (REPO / "demo" / "portcheck.toml").read_text()
        (tmp_path / "kernels.py").write_text((REPO / "demo" / "kernels.py").read_text())
        manifest = write_manifest(tmp_path, demo.replace("[defaults]\n", f'[defaults]\ncache_url = "{manifests.url}"\n'),
                                  kernels_py=None)

        def run(*extra, **env):
            home = tmp_path / f"home-{time.monotonic_ns()}"
            result = run_tool(["check", "-m", manifest, "-t", "cuda:90", "--python", venv_python, *extra],
                              cwd=tmp_path, TRITON_PORTCHECK_HOME=home, **env)
            assert result.returncode == 1, result.stderr
            return result.stderr

        assert manifests.url in run()
        assert environments.url in run(TRITON_PORTCHECK_CACHE_URL=environments.url)
        assert "remote cache" not in run("--cache-url", "none", TRITON_PORTCHECK_CACHE_URL=environments.url)
        assert manifests.stored_bytes()[0] == environments.stored_bytes()[0] > 0


@pytest.mark.parametrize("where, value, expected", [
    ("flag", "redis://:s3cret@host:99999", "--cache-url 'redis://:***@host:99999': the port is not a number from 1 "
     "to 65535"),
    ("env", "s3://bucket", "TRITON_PORTCHECK_CACHE_URL 's3://bucket': expected redis://HOST[:PORT][/DB]"),
    ("manifest", "rediss://host", "portcheck.toml:2: defaults.cache_url: only redis:// (no TLS)"),
    ("manifest-readonly", '"yes"', "portcheck.toml:2: defaults.cache_readonly: expected true or false"),
    ("timeout", "0", "--cache-timeout"),
    ("env-timeout", "0.0001", "TRITON_PORTCHECK_CACHE_TIMEOUT: '0.0001' is not a number of seconds from 0.001 to 600"),
])
def test_a_bad_cache_setting_is_one_line_and_exit_2(tmp_path, venv_python, where, value, expected):
    body = '[defaults]\n{}\ntargets = ["cuda:90"]\n'
    key = {"manifest": f'cache_url = "{value}"', "manifest-readonly": f"cache_readonly = {value}"}.get(where, "")
    manifest = write_manifest(tmp_path, body.format(key) + '\n[[kernel]]\nname = "a"\ntarget = "kernels.py:axpy"\n'
                              'signature = { x_ptr = "*fp32", y_ptr = "*fp32", out_ptr = "*fp32", n = "i32", a = "fp32" }\n'
                              "constants = { BLOCK = 64 }\n")
    args = ["check", "-m", manifest, "--python", venv_python]
    args += {"flag": ["--cache-url", value], "timeout": ["--cache-timeout", value]}.get(where, [])
    env = {"env": {"TRITON_PORTCHECK_CACHE_URL": value},
           "env-timeout": {"TRITON_PORTCHECK_CACHE_URL": "redis://localhost", "TRITON_PORTCHECK_CACHE_TIMEOUT": value},
           }.get(where, {})
    run = run_tool(args, cwd=tmp_path, **env)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], run.stderr
    assert "Traceback" not in run.stderr and "s3cret" not in run.stderr


def test_cache_stats_shows_the_last_runs_and_whether_the_remote_answers(tmp_path, venv_python):
    with RedisServer(tmp_path) as redis:
        check(tmp_path, "a", redis.url, venv_python)
        check(tmp_path, "b", redis.url, venv_python)
        home = tmp_path / "home-b"
        stats = run_tool(["cache", "stats"], cwd=tmp_path, TRITON_PORTCHECK_HOME=home,
                         TRITON_PORTCHECK_CACHE_URL=redis.url)
        assert stats.returncode == 0, stats.stderr
        assert f"remote:  {redis.url} (answers)" in stats.stdout
        row = stats.stdout.strip().splitlines()[-1].split()
        assert row[1:7] == ["0", "18", "0", "0", "0", "0"], stats.stdout  # local, remote, missed, ...
    stats = run_tool(["cache", "stats", "--cache-url", redis.url], cwd=tmp_path, TRITON_PORTCHECK_HOME=home)
    assert "(does not answer: Connection refused)" in stats.stdout


def forge(result):
    """Wrong inner types under a good checksum, as the hardening round found them (issue 28)."""
    if result["status"] == "error":
        result["error"] = {"type": ["x"], "message": ["a", "b"], "traceback": ["c"]}
    else:
        result["error"] = {"kind": 17}  # an ok result that carries an error


def test_a_remote_entry_forged_inside_a_good_checksum_is_a_miss_and_never_reaches_the_local_cache(
        server, tmp_path, venv_python):
    _, first, _ = check(tmp_path, "first", server.url, venv_python)
    forged = 0
    for name, text in server.entries():
        entry = json.loads(text)
        forge(entry["result"])
        server.put(name, resealed(entry))
        forged += 1
    run, second, remote = check(tmp_path, "second", server.url, venv_python)
    assert run.returncode == 1 and remote["remote_rejected"] == forged == len(first["cells"]), run.stderr
    assert verdicts(second) == verdicts(first)
    said = [line for line in run.stderr.splitlines() if "ignoring an entry of remote cache" in line]
    assert len(said) == 1, run.stderr  # said once, not once per entry
    assert "checksum does not match" not in said[0], said  # sealed as the tool seals: the content decides
    # What the local cache took from that run is the recompiled cells, never the forgeries.
    run, third, _ = check(tmp_path, "second", "none", venv_python)
    assert verdicts(third) == verdicts(first), run.stderr
