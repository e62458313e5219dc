//! Realistic mistakes in real consumer files, for the stub benchmark (tests/stubs.rs): each
//! one line of a real file changed as a hand slips (a misspelt member, a wrong keyword, a bad
//! codec, a call with an argument too many or too few, a setup key mistyped), made at test
//! time in a copy. `file` is the repository's consumer fixture (`object_store.py`) or a path
//! in the sglang 0.5.16 wheel; `find` occurs once in it.

/// The consumer fixture: the calls miles makes of the module and the core.
pub const FIXTURE: &str = "object_store.py";

const STORE: &str = "sglang/srt/mem_cache/storage/mooncake_store/mooncake_store.py";
const EMBEDDING: &str = "sglang/srt/mem_cache/storage/mooncake_store/mooncake_embedding_store.py";
const ENGINE: &str = "sglang/srt/distributed/device_communicators/mooncake_transfer_engine.py";
const BACKUP: &str = "sglang/srt/elastic_ep/expert_backup_manager.py";
const LOADER: &str = "sglang/srt/model_loader/remote_instance_weight_loader_utils.py";

pub struct Mistake {
    pub what: &'static str,
    pub file: &'static str,
    pub find: &'static str,
    pub replace: &'static str,
    /// Whether basedpyright reports it without stubs, with ours, with pybind11-stubgen's.
    pub caught: [bool; 3],
}

const ALL: [bool; 3] = [true, true, true];
const STUBS: [bool; 3] = [false, true, true];
const OURS: [bool; 3] = [false, true, false];
const NOBODY: [bool; 3] = [false, false, false];

const fn m(
    what: &'static str,
    file: &'static str,
    (find, replace): (&'static str, &'static str),
    caught: [bool; 3],
) -> Mistake {
    Mistake {
        what,
        file,
        find,
        replace,
        caught,
    }
}

pub const MISTAKES: &[Mistake] = &[
    m(
        "misspelt method of the module's class",
        FIXTURE,
        (
            "self._transfer.cleanup_dataproto(import_ref(handle))",
            "self._transfer.cleanup_data_proto(import_ref(handle))",
        ),
        ALL,
    ),
    m(
        "a codec FieldSchema does not have",
        FIXTURE,
        (
            "FieldSchema(codec, nullable=False",
            "FieldSchema(\"msgpack\", nullable=False",
        ),
        OURS,
    ),
    m(
        "a put type outside its domain",
        FIXTURE,
        ("type=\"dict\",", "type=\"dicts\","),
        ALL,
    ),
    m(
        "wrong keyword to put",
        FIXTURE,
        ("namespace=\"miles\",", "name_space=\"miles\","),
        ALL,
    ),
    m(
        "wrong keyword to put (chunk size)",
        FIXTURE,
        ("chunk_bytes=None,", "chunk_size=None,"),
        ALL,
    ),
    m(
        "a dict where put takes a ReplicateConfig",
        FIXTURE,
        ("config=self._replicate(),", "config={\"replica_num\": 2},"),
        OURS,
    ),
    m(
        "wrong keyword to the transfer's constructor",
        FIXTURE,
        (
            "MooncakeBundleTransfer(store, key_prefix=\"miles-object-store\")",
            "MooncakeBundleTransfer(store, prefix=\"miles-object-store\")",
        ),
        ALL,
    ),
    m(
        "wrong keyword to get",
        FIXTURE,
        (
            "self._transfer.get(import_ref(handle), type=\"dict\")",
            "self._transfer.get(import_ref(handle), kind=\"dict\")",
        ),
        ALL,
    ),
    m(
        "an argument too many to export_ref",
        FIXTURE,
        ("return export_ref(ref)", "return export_ref(ref, \"json\")"),
        ALL,
    ),
    m(
        "misspelt class imported from the core",
        FIXTURE,
        (
            "from mooncake.store import MooncakeDistributedStore, ReplicateConfig",
            "from mooncake.store import MooncakeDistributedStore, ReplicaConfig",
        ),
        ALL,
    ),
    m(
        "misspelt ReplicateConfig attribute written",
        FIXTURE,
        (
            "config.replica_num = self._replicas",
            "config.replicas = self._replicas",
        ),
        STUBS,
    ),
    m(
        "an argument to ReplicateConfig(), which takes none",
        FIXTURE,
        (
            "config = ReplicateConfig()",
            "config = ReplicateConfig(self._replicas)",
        ),
        STUBS,
    ),
    m(
        "an argument too many to setup",
        FIXTURE,
        (
            "if store.setup(store_config(kwargs, contribute)):",
            "if store.setup(store_config(kwargs, contribute), contribute):",
        ),
        STUBS,
    ),
    m(
        "a setup key mistyped (the dict built by a helper)",
        FIXTURE,
        ("\"rdma_devices\": \"\",", "\"rdma_device\": \"\","),
        NOBODY,
    ),
    m(
        "misspelt store method",
        STORE,
        (
            "return self.store.batch_is_exist(key_strs)",
            "return self.store.batch_exists(key_strs)",
        ),
        STUBS,
    ),
    m(
        "misspelt store method (is_exist)",
        STORE,
        (
            "assert self.store.is_exist(warmup_key) == 1",
            "assert self.store.exists(warmup_key) == 1",
        ),
        STUBS,
    ),
    m(
        "an argument missing to batch_get_into",
        STORE,
        (
            "return self.store.batch_get_into(key_strs, buffer_ptrs, buffer_sizes)",
            "return self.store.batch_get_into(key_strs, buffer_ptrs)",
        ),
        STUBS,
    ),
    m(
        "wrong keyword to batch_put_from",
        STORE,
        (
            "return self.store.batch_put_from(key_strs, buffer_ptrs, buffer_sizes)",
            "return self.store.batch_put_from(key_strs, buffer_ptrs, buffer_sizes, replicate_config=None)",
        ),
        STUBS,
    ),
    m(
        "get's key passed by keyword (pybind11's arg0)",
        STORE,
        (
            "assert self.store.get(warmup_key) == warmup_value",
            "assert self.store.get(key=warmup_key) == warmup_value",
        ),
        STUBS,
    ),
    m(
        "arguments to remove_all, which takes one",
        STORE,
        (
            "self.store.remove_all()",
            "self.store.remove_all(True, True)",
        ),
        STUBS,
    ),
    m(
        "the size missing to register_buffer",
        STORE,
        (
            "ret_code = self.store.register_buffer(ptr, size)",
            "ret_code = self.store.register_buffer(ptr)",
        ),
        NOBODY,
    ),
    m(
        "the value missing to put",
        STORE,
        (
            "ret = self.store.put(warmup_key, warmup_value)",
            "ret = self.store.put(warmup_key)",
        ),
        STUBS,
    ),
    m(
        "misspelt ReplicateConfig attribute (group_ids)",
        STORE,
        (
            "config.group_ids = group_ids",
            "config.group_id = group_ids",
        ),
        STUBS,
    ),
    m(
        "an argument missing to setup_dummy",
        STORE,
        (
            "self.config.client_server_address,",
            "# self.config.client_server_address,",
        ),
        STUBS,
    ),
    m(
        "an argument to the allocator, which takes none",
        STORE,
        (
            "self.allocator = MooncakeHostMemAllocator()",
            "self.allocator = MooncakeHostMemAllocator(0)",
        ),
        STUBS,
    ),
    m(
        "an argument too many to batch_get_into",
        EMBEDDING,
        (
            "results = self.store.batch_get_into(keys, ptrs, sizes)",
            "results = self.store.batch_get_into(keys, ptrs, sizes, True)",
        ),
        STUBS,
    ),
    m(
        "arguments too many to register_memory",
        ENGINE,
        (
            "ret_value = self.engine.register_memory(ptr, length)",
            "ret_value = self.engine.register_memory(ptr, length, \"cpu:0\", 1)",
        ),
        STUBS,
    ),
    m(
        "unregister_memory's address by keyword (pybind11's arg0)",
        ENGINE,
        (
            "ret_value = self.engine.unregister_memory(ptr)",
            "ret_value = self.engine.unregister_memory(buffer_addr=ptr)",
        ),
        STUBS,
    ),
    m(
        "wrong keyword to send_probe",
        ENGINE,
        (
            "return self.engine.send_probe(peer_session_id)",
            "return self.engine.send_probe(peer=peer_session_id)",
        ),
        STUBS,
    ),
    m(
        "misspelt engine method",
        ENGINE,
        (
            "return self.engine.get_engine()",
            "return self.engine.get_engine_pointer()",
        ),
        STUBS,
    ),
    m(
        "an argument missing to initialize",
        ENGINE,
        ("\"P2PHANDSHAKE\",", "# \"P2PHANDSHAKE\","),
        STUBS,
    ),
    m(
        "an argument to TransferEngine(), which takes none",
        ENGINE,
        (
            "self.engine = TransferEngine()",
            "self.engine = TransferEngine(hostname)",
        ),
        STUBS,
    ),
    m(
        "the lengths missing to batch_register_memory",
        ENGINE,
        (
            "ret_value = self.engine.batch_register_memory(ptrs, lengths)",
            "ret_value = self.engine.batch_register_memory(ptrs)",
        ),
        STUBS,
    ),
    m(
        "the length missing to register_memory (an engine held by another object)",
        BACKUP,
        (
            "ret_value = self.transfer_engine.engine.register_memory(server_ptr, server_len)",
            "ret_value = self.transfer_engine.engine.register_memory(server_ptr)",
        ),
        STUBS,
    ),
    m(
        "misspelt engine method (an engine passed in unannotated)",
        LOADER,
        (
            "ret = transfer_engine.register_memory(address, size)",
            "ret = transfer_engine.register_mem(address, size)",
        ),
        NOBODY,
    ),
];
