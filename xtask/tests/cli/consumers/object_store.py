"""A consumer fixture: the calls miles/utils/object_store.py makes, with its values."""
import os

try:
    from mooncake.store import MooncakeDistributedStore, ReplicateConfig
    from mooncake.structured_object_store import FieldSchema, MooncakeBundleTransfer, export_ref, import_ref
except ImportError:
    FieldSchema = None


def store_config(kwargs, contribute):
    config = {
        "local_hostname": kwargs.get("local_hostname", "127.0.0.1"),
        "metadata_server": kwargs.get("metadata_server", "P2PHANDSHAKE"),
        "local_buffer_size": 32 << 30,
        "protocol": kwargs.get("protocol", "rdma"),
        "rdma_devices": "",
        "master_server_addr": os.environ.get("MOONCAKE_MASTER", ""),
    }
    config["global_segment_size"] = (8 << 30) if contribute else 0
    return config


class Store:
    def __init__(self, kwargs, contribute, replicas):
        store = MooncakeDistributedStore()
        if store.setup(store_config(kwargs, contribute)):
            raise RuntimeError("setup failed")
        self._transfer = MooncakeBundleTransfer(store, key_prefix="miles-object-store")
        self._replicas = replicas

    def put(self, value, specs):
        ref = self._transfer.put(
            value,
            type="dict",
            namespace="miles",
            chunk_bytes=None,
            config=self._replicate(),
            field_schemas={
                name: FieldSchema(codec, nullable=False, metadata={"section": "meta_info" if codec == "auto" else "non_tensor_batch"})
                for name, codec in specs.items()
            },
        )
        return export_ref(ref)

    def get(self, handle):
        value = self._transfer.get(import_ref(handle), type="dict")
        return value, MooncakeBundleTransfer.release_result

    def remove(self, handle):
        self._transfer.cleanup_dataproto(import_ref(handle))

    def _replicate(self):
        if self._replicas == 1:
            return None
        config = ReplicateConfig()
        config.replica_num = self._replicas
        return config
