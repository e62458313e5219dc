"""One put through MooncakeBundleTransfer over whatever core this venv has, on the real
mooncake_master at MC_PAIR_MASTER: prints `put ok`, or the error the put raised and exits 3."""

import os
import sys
import traceback

import numpy as np
from mooncake.store import MooncakeDistributedStore
from mooncake.structured_object_store import MooncakeBundleTransfer

store = MooncakeDistributedStore()
rc = store.setup(
    {
        "local_hostname": "127.0.0.1",
        "metadata_server": "P2PHANDSHAKE",
        # 0.3.11.post1 cores refuse a segment under 1024 bytes (0 included).
        "global_segment_size": 64 << 20,
        "local_buffer_size": 32 << 20,
        "protocol": "tcp",
        "rdma_devices": "",
        "master_server_addr": os.environ["MC_PAIR_MASTER"],
    }
)
print(f"setup rc={rc}", flush=True)
if rc != 0:
    sys.exit(f"setup failed with {rc}")
transfer = MooncakeBundleTransfer(store, key_prefix="pairing")
try:
    transfer.put({"x": np.arange(16, dtype=np.int64)}, type="dict", namespace="pairing")
except Exception as exc:
    traceback.print_exc(file=sys.stdout)
    print(f"put failed: {type(exc).__name__}: {exc}", flush=True)
    store.close()  # a client left open can crash the interpreter's exit
    sys.exit(3)
print("put ok", flush=True)
store.close()
