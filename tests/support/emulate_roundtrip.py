"""A small put/get round trip in an emulated image, through the shim its layer installed,
on a real mooncake_master (MC_EMU_MASTER, MC_EMU_METADATA)."""

import json
import os
import sys

import numpy as np

import mooncake_sos  # noqa: F401  (raises one ImportError listing every miss)
from mooncake.store import MooncakeDistributedStore, ReplicateConfig
from mooncake_sos import FieldSchema, MooncakeBundleTransfer, export_ref, import_ref

store = MooncakeDistributedStore()
rc = store.setup(
    {
        "local_hostname": "127.0.0.1",
        "metadata_server": os.environ["MC_EMU_METADATA"],
        "global_segment_size": 128 << 20,
        "local_buffer_size": 64 << 20,
        "protocol": "tcp",
        "rdma_devices": "",
        "master_server_addr": os.environ["MC_EMU_MASTER"],
    }
)
print(f"setup rc={rc}", flush=True)
if rc != 0:
    sys.exit(f"setup failed with {rc}")

data = {
    "input_ids": np.arange(8, dtype=np.int64).reshape(2, 4),
    "rewards": np.array([0.5, -1.0], dtype=np.float32),
    "prompts": ["hello", "wörld"],
}
schemas = {
    "input_ids": FieldSchema("ndarray", nullable=False, metadata={"section": "batch", "dtype": "int64"}),
    "rewards": FieldSchema("ndarray", nullable=False, metadata={"section": "batch", "dtype": "float32"}),
    "prompts": FieldSchema("utf8_ragged", nullable=False, metadata={"section": "non_tensor_batch"}),
}
config = ReplicateConfig()
config.replica_num = 1
transfer = MooncakeBundleTransfer(store, key_prefix="emulate")
ref = transfer.put(data, type="dict", namespace="emulate", config=config, field_schemas=schemas)
handle = json.loads(json.dumps(export_ref(ref)))
got = transfer.get(import_ref(handle), type="dict")
assert np.array_equal(got["input_ids"], data["input_ids"]), got["input_ids"]
assert np.array_equal(got["rewards"], data["rewards"]), got["rewards"]
assert list(got["prompts"]) == data["prompts"], got["prompts"]
MooncakeBundleTransfer.release_result(got)
transfer.cleanup_dataproto(import_ref(handle))
print("round trip ok: " + ", ".join(sorted(got)), flush=True)
