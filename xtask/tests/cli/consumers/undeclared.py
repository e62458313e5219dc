"""A consumer fixture that uses what api.toml does not declare: a keyword, a symbol, a setup key."""
from mooncake.store import MooncakeDistributedStore
from mooncake.structured_object_store import MooncakeBundleTransfer, export_ref, import_ref_v2

store = MooncakeDistributedStore()
store.setup({"local_hostname": "127.0.0.1", "protocol": "tcp", "enable_ssd_offload": True})
transfer = MooncakeBundleTransfer(store, key_prefix="miles-object-store")
handle = export_ref(transfer.put({"x": 1}, type="dict", compression="zstd"))
