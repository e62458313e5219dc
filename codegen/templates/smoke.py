

# --- The smoke (`--smoke`): the consumer's own calls, as api.toml's [[scenario]] tables state
# them, run against the installed module and native core and a mooncake_master started from the
# installed wheel. Included into the shim by its template (one file to ship); fixed code.

SCENARIOS: list[dict[str, Any]] = {{ scenarios_lit }}

SMOKE_TIMEOUT = 30.0  # seconds each scenario may take (--timeout); a stuck call fails it
_MASTER_START = 15.0  # seconds the master may take to open its port


class _Failed(Exception):
    """A call returned a failure status, or an expectation after it did not hold."""


def _plain(v: Any) -> Any:
    """Arrays and tensors as nested lists, tuples as lists: what the values are, not their box."""
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple, dict, str, bytes)):
        return _plain(v.tolist())
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _same(want: Any, got: Any) -> bool:
    """Equal in type and value, floats bit for bit; arrays on both sides also in dtype."""
    for a, b in ((want, got), (got, want)):
        if hasattr(a, "dtype") and hasattr(b, "dtype") and str(a.dtype) != str(b.dtype):
            return False
    want, got = _plain(want), _plain(got)
    if type(want) is not type(got):
        return False
    if isinstance(want, float):
        return want.hex() == got.hex()
    if isinstance(want, list):
        return len(want) == len(got) and all(_same(a, b) for a, b in zip(want, got))
    if isinstance(want, dict):
        return want.keys() == got.keys() and all(_same(want[k], got[k]) for k in want)
    return want == got


def _value(field: dict[str, Any]) -> Any:
    """A field's value as the consumer passes it: numpy arrays, torch tensors, plain data."""
    codec, dtype, value = field["codec"], field["dtype"], field["value"]
    if codec == "ndarray":
        import numpy

        return numpy.asarray(value, dtype=dtype)
    if codec == "typed_ragged":
        import numpy

        return [None if r is None else numpy.asarray(r, dtype=dtype) for r in value]
    if codec == "ragged_tensor_dict":
        import torch

        kind = getattr(torch, dtype)
        return [None if r is None else {k: torch.tensor(x, dtype=kind) for k, x in r.items()} for r in value]
    return value


def _key_count(metrics_port: int) -> int:
    """The master's own count of the keys it holds (its Prometheus metrics)."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("master_key_count "):
                return int(float(line.split()[1]))
    raise _Failed("the master's metrics have no master_key_count")


def _smoke_worker(name: str, rpc_port: int, metrics_port: int) -> None:
    """Runs one scenario in this process; prints `@call`, then `@ok` or `@fail` (JSON)."""
    import os

    scenario = next(s for s in SCENARIOS if s["name"] == name)
    step = {"call": "import", "args": MODULE}

    def call(label: str, args: str, fn: Any) -> Any:
        step.update(call=label, args=args)
        print("@call " + json.dumps(step), flush=True)
        return fn()

    stores: dict[str, Any] = {}  # kept alive until the exit
    code = 1
    try:
        native = importlib.import_module(NATIVE_MODULE)
        module = importlib.import_module(MODULE)
        transfers = {}
        for c in scenario["clients"]:
            config = {
                "local_hostname": "127.0.0.1", "metadata_server": "P2PHANDSHAKE",
                "global_segment_size": c["global_segment_size"], "local_buffer_size": c["local_buffer_size"],
                "protocol": c["protocol"], "rdma_devices": "", "master_server_addr": f"127.0.0.1:{rpc_port}",
            }
            store = stores[c["name"]] = native.MooncakeDistributedStore()
            rc = call(f"{c['name']}: setup", json.dumps(config), lambda: store.setup(config))
            if rc != 0:
                raise _Failed(f"setup returned {rc}")
            transfers[c["name"]] = call(
                f"{c['name']}: MooncakeBundleTransfer", f"store, key_prefix={scenario['key_prefix']!r}",
                lambda: module.MooncakeBundleTransfer(stores[c["name"]], key_prefix=scenario["key_prefix"]))
        put, get = scenario["put"], scenario["get"]
        data = call("values", "the fields' rows as numpy arrays, torch tensors or plain data",
                    lambda: {f["name"]: _value(f) for f in scenario["fields"]})
        schemas = {}
        for f in scenario["fields"]:
            metadata = {"section": f["section"]} if f["dtype"] is None else {"section": f["section"], "dtype": f["dtype"]}
            schemas[f["name"]] = module.FieldSchema(f["codec"], nullable=f["nullable"], metadata=metadata)
        config = None
        if put["replica_num"] is not None:
            config = native.ReplicateConfig()
            config.replica_num = put["replica_num"]
        before = _key_count(metrics_port)
        args = (f"data, type={put['type']!r}, namespace={put['namespace']!r}, chunk_bytes={put['chunk_bytes']!r}, "
                f"config={'None' if config is None else 'ReplicateConfig(replica_num=%d)' % put['replica_num']}, "
                f"field_schemas={ {k: (s.codec, s.metadata) for k, s in schemas.items()} }")
        ref = call(f"{put['by']}: put", args, lambda: transfers[put["by"]].put(
            data, type=put["type"], namespace=put["namespace"], chunk_bytes=put["chunk_bytes"],
            config=config, field_schemas=schemas))
        if _key_count(metrics_port) <= before:
            raise _Failed("the master holds no new key after it")
        text = call(f"{put['by']}: export_ref", "ref", lambda: json.dumps(module.export_ref(ref)))
        got = call(f"{get['by']}: get", f"import_ref(json.loads(text)), type={get['type']!r}",
                   lambda: transfers[get["by"]].get(module.import_ref(json.loads(text)), type=get["type"]))
        if sorted(got) != sorted(data):
            raise _Failed(f"returned fields {sorted(got)}, expected {sorted(data)}")
        for name, want in data.items():
            if not _same(want, got[name]):
                raise _Failed(f"field {name!r} came back as {_plain(got[name])!r:.300}, expected {_plain(want)!r:.300}")
        call(f"{get['by']}: MooncakeBundleTransfer.release_result", "value",
             lambda: module.MooncakeBundleTransfer.release_result(got))
        call(f"{get['by']}: cleanup_dataproto", "import_ref(json.loads(text))",
             lambda: transfers[get["by"]].cleanup_dataproto(module.import_ref(json.loads(text))))
        left = _key_count(metrics_port) - before
        if left:
            raise _Failed(f"{left} key(s) left in the master after it")
        print("@ok", flush=True)
        code = 0
    except _Failed as exc:
        print("@fail " + json.dumps({**step, "error": str(exc)}), flush=True)
    except BaseException as exc:
        print("@fail " + json.dumps({**step, "error": f"raised {type(exc).__name__}: {exc}"}), flush=True)
    sys.stdout.flush()
    # No close(): the consumer does not call it, it takes seconds, and the run's master goes
    # with the scenario. os._exit skips the native clients' exit handlers, which could turn a
    # verdict into a crash.
    os._exit(code)


def _die_with_parent() -> None:
    """In a child before exec: SIGKILL when the smoke dies, whatever kills it (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except Exception:
        pass


def _free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _start_master(binary: str, log: Any) -> tuple[Any, int, int]:
    """The installed wheel's mooncake_master on free loopback ports, once its port is open."""
    import os
    import socket
    import subprocess
    import time

    deadline = time.monotonic() + _MASTER_START
    while time.monotonic() < deadline:  # a port taken between the pick and the bind: again
        rpc, metrics = _free_ports(2)
        log.flush()
        start = os.lseek(log.fileno(), 0, os.SEEK_END)
        master = subprocess.Popen([binary, "-rpc_address=127.0.0.1", f"-rpc_port={rpc}", f"-metrics_port={metrics}"],
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                  preexec_fn=_die_with_parent)
        while master.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", rpc), timeout=0.2).close()
                return master, rpc, metrics
            except OSError:
                time.sleep(0.05)
        status = master.poll()
        _stop(master)
        if status is None:
            break
        # It exited: a port taken meanwhile is tried again; anything else (a library the
        # loader cannot find, a bad flag) is said once, with the master's own first words.
        end = os.lseek(log.fileno(), 0, os.SEEK_END)
        output = os.pread(log.fileno(), end - start, start).decode(errors="replace")
        said = [line.strip() for line in output.splitlines() if line.strip()]
        if not any("in use" in line or "bind" in line.lower() for line in said):
            why = said[0] if said else "no output"
            raise _Failed(f"{binary} exited with status {status} before opening its port: {why}")
    raise _Failed(f"{binary} did not open its port within {_MASTER_START:.0f} s")


def _stop(proc: Any) -> None:
    import os
    import signal

    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
    proc.wait()


def _log_tail(header: str, log: Any) -> None:
    """What the scenario's master and worker logged: the errors (glog E/F lines), else the end."""
    log.flush()
    log.seek(0)
    lines = log.read().splitlines()
    errors = [line for line in lines if line[:1] in ("E", "F") and line[1:2].isdigit()]
    print("\n".join([header] + (errors or lines)[-15:]), file=sys.stderr)


def _run_scenario(s: dict[str, Any], rpc: int, metrics: int, timeout: float, log: Any) -> tuple[bool, str]:
    """One scenario in a worker process, killed at `timeout`: (passed, what happened)."""
    import os
    import subprocess

    cmd = [sys.executable, os.path.abspath(__file__), "--smoke-worker", s["name"], str(rpc), str(metrics)]
    env = dict(os.environ)
    env.setdefault("MC_TCP_BIND_ADDRESS", "127.0.0.1")  # loopback, not the machine's address
    worker = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=env,
                              start_new_session=True, preexec_fn=_die_with_parent, text=True)
    try:
        out, _ = worker.communicate(timeout=timeout)
        stuck = False
    except subprocess.TimeoutExpired:
        _stop(worker)
        out, _ = worker.communicate()
        stuck = True
    finally:
        _stop(worker)
    last: dict[str, Any] = {"call": "start", "args": ""}
    for line in out.splitlines():
        if line.startswith("@ok"):
            return True, "ok"
        if line.startswith(("@call ", "@fail ")):
            last = json.loads(line[6:])
    where = f"{last['call']}({last['args']})"
    if stuck:
        return False, f"{where} did not return within {timeout:g} s"
    return False, f"{where}: {last.get('error', f'the worker exited with {worker.returncode}')}"


def _master_binary() -> str | None:
    """The installed package's own mooncake_master (wheels ship it there), else PATH's."""
    import os
    import shutil

    package = importlib.util.find_spec(NATIVE_MODULE.split(".")[0])
    for where in list(package.submodule_search_locations or []) if package else []:
        path = os.path.join(where, "mooncake_master")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("mooncake_master")


def smoke(timeout: float = SMOKE_TIMEOUT) -> int:
    """Runs every scenario; one line each on stdout; 0 if none failed, 1 otherwise."""
    import signal
    import tempfile
    import time

    # Present is enough: a torch that fails to import fails its scenarios, named.
    have_torch = importlib.util.find_spec("torch") is not None
    binary = _master_binary()
    counts = {"ok": 0, "failed": 0, "not run": 0}
    # SIGTERM unwinds like Ctrl-C, so the finally below stops the master on every path.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix=f"{SHIM}-smoke-") as tmp, open(f"{tmp}/log", "w+") as log:
        try:
            if binary is None:
                raise _Failed(f"no mooncake_master in the installed {NATIVE_MODULE.split('.')[0]} package, nor on PATH")
            stuck = None
            for s in SCENARIOS:
                started = time.monotonic()
                if s["needs_torch"] and not have_torch:
                    verdict = "not run (needs torch)"
                elif stuck:
                    verdict = f"not run ({stuck} timed out first)"
                else:
                    # A master of its own: what one scenario leaves cannot touch the next.
                    log.seek(0)
                    log.truncate()
                    master, rpc, metrics = _start_master(binary, log)
                    try:
                        ok, what = _run_scenario(s, rpc, metrics, timeout, log)
                    finally:
                        _stop(master)
                    if not ok:
                        _log_tail(f"smoke {s['name']}: its master and worker logged:", log)
                    verdict = f"ok ({time.monotonic() - started:.2f} s)" if ok else f"FAILED: {what}"
                    stuck = s["name"] if "did not return within" in what else None
                counts["ok" if verdict.startswith("ok") else "not run" if verdict.startswith("not") else "failed"] += 1
                print(f"smoke {s['name']}: {verdict}", flush=True)
        except _Failed as exc:
            print(f"smoke: FAILED: {exc}", flush=True)
            _log_tail("smoke: the master logged:", log)
            counts["failed"] += 1
    print(f"smoke: {counts['ok']} ok, {counts['failed']} failed, {counts['not run']} not run; "
          f"{MODULE} as pinned at {UPSTREAM_REPO}@{UPSTREAM_COMMIT}; master {binary}", flush=True)
    return 1 if counts["failed"] else 0
