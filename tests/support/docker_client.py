"""A client of the consumer's kind (miles/utils/object_store.py), run inside a built image by
tests/docker_roundtrip.rs, through the shim the image's check step installed.

usage: python3 docker_client.py put|get|cycle   (settings in the environment, see below)

- put:   contributes a segment, puts the payload REPEAT times (default 1) with the
         consumer's call shapes, prints `put ok: ... in S s` each time, then one
         `handle: <export_ref JSON>` per put, then keeps its segment (the data lives there)
         until a line arrives on stdin.
- get:   contributes no segment (the rollout manager's kind), reads HANDLE (one handle or
         a JSON list of them), gets each back, compares it byte for byte with the payload
         made from the same SEED, releases the result, cleans the ref up and prints
         `get ok: ... in S s` (the get call alone).
- cycle: put, export, import, get and compare in a loop, printing `cycle N ok` each time,
         until something fails; then prints `error: ...` and exits 1.

Every store call is guarded as the project's Rust runtime guards it: the master's port is
probed first (a dead master fails in ~1 s, not after the native client's retries), and a
call still running after DEADLINE seconds ends the client with an error naming it (a call
in flight when the master dies otherwise hangs for minutes in the native client).

Environment: MASTER (ip:port), METADATA (http URL), SEED, MIB (payload size), HANDLE (get),
DEADLINE (seconds, default 4), LOCAL_HOSTNAME (default: this container's address), REPLICAS
(pass config=ReplicateConfig() with replica_num set, as the consumer does for n > 1).
MC_STORE_MEMCPY=0 and protocol tcp: the bytes go over the network even between clients on
one host.
"""

import hashlib
import json
import os
import socket
import sys
import threading
import time

import numpy as np

import mooncake_sos  # noqa: F401  (raises one ImportError listing every miss)
from mooncake.store import MooncakeDistributedStore, ReplicateConfig
from mooncake_sos import FieldSchema, MooncakeBundleTransfer, export_ref, import_ref

ROWS = 8


def payload(seed: int, mib: int) -> dict:
    """Row-aligned fields of the consumer's codecs, plus `bulk`: MIB MiB of uint8 rows."""
    rng = np.random.default_rng(seed)
    cols = max(1, (mib << 20) // ROWS)
    return {
        "bulk": rng.integers(0, 256, size=(ROWS, cols), dtype=np.uint8),
        "rewards": rng.standard_normal(ROWS).astype(np.float32),
        "tokens": [rng.integers(0, 50_000, size=i + 1, dtype=np.int32) for i in range(ROWS)],
        "extra": [{"row": i, "seed": seed, "tags": ["a", "ü", None]} for i in range(ROWS)],
        "step": seed,
    }


def schemas() -> dict:
    """As the consumer writes them: meta_info for `auto`, non_tensor_batch for the rest."""
    def schema(codec, dtype=None):
        meta = {"section": "meta_info" if codec == "auto" else "non_tensor_batch"}
        if dtype:
            meta["dtype"] = dtype
        return FieldSchema(codec, nullable=False, metadata=meta)

    # `bulk` in the batch section, which get(type="dict") returns as one array (the
    # non_tensor_batch section comes back as Python lists, row by row).
    bulk = FieldSchema("ndarray", nullable=False, metadata={"section": "batch", "dtype": "uint8"})
    return {
        "bulk": bulk,
        "rewards": schema("ndarray", "float32"),
        "tokens": schema("typed_ragged", "int32"),
        "extra": schema("msgpack_ragged"),
        "step": schema("auto"),
    }


def digest(value: dict) -> str:
    """sha256 over every field's bytes in its declared dtype, in a fixed order: equal iff
    the values are (lists of Python numbers convert back exactly)."""
    h = hashlib.sha256()
    h.update(np.asarray(value["bulk"], dtype=np.uint8).tobytes())
    h.update(np.asarray(value["rewards"], dtype=np.float32).tobytes())
    for row in value["tokens"]:
        h.update(np.asarray(row, dtype=np.int32).tobytes() + b"|")
    h.update(json.dumps(list(value["extra"]), sort_keys=True).encode())
    h.update(str(value["step"]).encode())
    return h.hexdigest()


def probe(timeout: float = 1.0) -> None:
    host, port = os.environ["MASTER"].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConnectionError(f"master {host}:{port} unreachable ({exc})") from None


def guarded(what: str, call, *args):
    """call(*args) after a master probe, in a worker thread (the native calls release the
    GIL), failing with TimeoutError when it has not returned after DEADLINE seconds."""
    probe()
    deadline = float(os.environ.get("DEADLINE", "4"))
    box = {}

    def run():
        try:
            box["value"] = call(*args)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        try:
            probe(timeout=0.5)
            state = "its port still answers"
        except ConnectionError as exc:
            state = str(exc)
        raise TimeoutError(f"{what} did not return within {deadline} s; {state}")
    if "error" in box:
        raise box["error"]
    return box["value"]


def fail(message: str) -> None:
    """Report and leave at once: a native call may still hang in another thread, and the
    store's destructor would retry the dead master for minutes."""
    print(f"error: {message}", flush=True)
    os._exit(1)


def connect(segment: int) -> MooncakeDistributedStore:
    store = MooncakeDistributedStore()
    rc = store.setup({
        "local_hostname": os.environ.get("LOCAL_HOSTNAME") or socket.gethostbyname(socket.gethostname()),
        "metadata_server": os.environ["METADATA"],
        "global_segment_size": segment,
        "local_buffer_size": 512 << 20,
        "protocol": "tcp",
        "rdma_devices": "",
        "master_server_addr": os.environ["MASTER"],
    })
    if rc != 0:
        fail(f"setup returned {rc}")
    return store


def put_one(transfer: MooncakeBundleTransfer, value: dict) -> str:
    config = None
    if os.environ.get("REPLICAS"):
        config = ReplicateConfig()
        config.replica_num = int(os.environ["REPLICAS"])
    ref = guarded(
        "put",
        lambda: transfer.put(
            value, type="dict", namespace="miles", config=config, field_schemas=schemas()
        ),
    )
    return json.dumps(export_ref(ref))


def get_one(transfer: MooncakeBundleTransfer, handle: str, want: str) -> float:
    """Gets and checks one ref; returns the seconds the get itself took."""
    start = time.perf_counter()
    got = guarded("get", lambda: transfer.get(import_ref(json.loads(handle)), type="dict"))
    took = time.perf_counter() - start
    try:
        found = digest(got)
        if found != want:
            raise AssertionError(f"payload differs: sha256 {found}, put {want}")
    finally:
        MooncakeBundleTransfer.release_result(got)
    return took


def cleanup(transfer: MooncakeBundleTransfer, handle: str) -> None:
    guarded("cleanup_dataproto", lambda: transfer.cleanup_dataproto(import_ref(json.loads(handle))))


def main(role: str) -> None:
    seed, mib = int(os.environ["SEED"]), int(os.environ["MIB"])
    value = payload(seed, mib)
    want = digest(value)
    repeat = int(os.environ.get("REPEAT", "1"))
    # Room for every put, twice over; the getter contributes none (the rollout manager's kind).
    segment = 0 if role == "get" else (mib * repeat + 64) << 21
    try:
        transfer = MooncakeBundleTransfer(
            guarded("setup", connect, segment), key_prefix="miles-object-store"
        )
        if role == "put":
            handles = []
            for _ in range(repeat):
                start = time.perf_counter()
                handles.append(put_one(transfer, value))
                print(f"put ok: {mib} MiB in {time.perf_counter() - start:.4f} s", flush=True)
            for handle in handles:
                print(f"handle: {handle}", flush=True)
            sys.stdin.readline()
        elif role == "get":
            handles = json.loads(os.environ["HANDLE"])
            for handle in handles if isinstance(handles, list) else [handles]:
                handle = json.dumps(handle)
                took = get_one(transfer, handle, want)
                cleanup(transfer, handle)
                print(f"get ok: {mib} MiB in {took:.4f} s, sha256 {want}", flush=True)
        elif role == "cycle":
            n = 0
            while True:
                handle = put_one(transfer, value)
                get_one(transfer, handle, want)
                cleanup(transfer, handle)
                n += 1
                print(f"cycle {n} ok at {time.time():.3f}", flush=True)
        else:
            fail(f"unknown role {role!r}")
    except Exception as exc:  # every failure is reported, none is retried
        fail(f"{type(exc).__name__}: {exc} (at {time.time():.3f})")


if __name__ == "__main__":
    main(sys.argv[1])
