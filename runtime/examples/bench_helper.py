# Python side of `cargo run --release --example bench`: the same calls the Rust bindings make,
# timed from Python, plus the two baselines (a raw numpy copy, a pure-Python dict store).
import time

import numpy as np
from mooncake.structured_object_store import FieldSchema, MooncakeBundleTransfer

SCHEMA = {"x": FieldSchema("ndarray", nullable=False, metadata={"section": "batch", "dtype": "uint8"})}


def payload(nbytes):
    """A flat dict with one (1024, nbytes/1024) uint8 array of non-trivial bytes."""
    data = np.resize(np.arange(251, dtype=np.uint8), nbytes).reshape(1024, -1)
    return {"x": data}


def transfer(store):
    return MooncakeBundleTransfer(store, key_prefix="bench")


def once(t, data, check=False):
    """(put seconds, get seconds) of one put + get, then release and cleanup (not timed)."""
    t0 = time.perf_counter()
    ref = t.put(data, type="dict", field_schemas=SCHEMA)
    t1 = time.perf_counter()
    out = t.get(ref, type="dict")
    t2 = time.perf_counter()
    if check and not np.array_equal(out["x"], data["x"]):
        raise AssertionError("bytes differ after a round trip")
    MooncakeBundleTransfer.release_result(out)
    t.cleanup_dataproto(ref)
    return t1 - t0, t2 - t1


def copy_once(data):
    """A raw numpy copy as the put/get baseline: allocate + memcpy, both ways."""
    t0 = time.perf_counter()
    stored = data["x"].copy()
    t1 = time.perf_counter()
    back = stored.copy()
    t2 = time.perf_counter()
    del stored, back
    return t1 - t0, t2 - t1


class DictStore:
    """The slow baseline: put/get/remove/is_exist only, bytes in a dict."""

    def __init__(self):
        self.data = {}

    def put(self, key, value, config=None):
        self.data[key] = bytes(value)
        return 0

    def get(self, key):
        return self.data.get(key, b"")

    def remove(self, key, force=False):
        return 0 if self.data.pop(key, None) is not None else -704

    def is_exist(self, key):
        return int(key in self.data)
