import typing
from dataclasses import dataclass, field
from typing import Any, Literal

DEFAULT_BUNDLE_CHUNK_BYTES = 64 << 20


@dataclass(frozen=True)
class FieldSchema:
    codec: str
    nullable: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)


def _encode_with_schema(values, schema: FieldSchema):
    codec = schema.codec
    if codec == "auto":
        return values
    if codec == "ragged_tensor_dict":
        return values
    if codec in ("ragged_tensor", "typed_ragged"):
        payload = values
    elif codec == "ndarray" or codec == "bytes_ragged":
        payload = values
    elif codec in {"media_bytes", "media_list_ragged", "utf8_ragged"}:
        payload = values
    elif codec in ["msgpack_ragged", "json_ragged"]:
        payload = values
    else:
        raise ValueError(f"unsupported schema codec: {codec!r}")
    return payload


def export_dataproto_ref(ref):
    return {}


def export_other_ref(ref):
    return {}


def import_dataproto_ref(handle):
    return handle


class MooncakeBundleTransfer:
    def __init__(self, store, key_prefix: str = "bundle", default_chunk_bytes: int = DEFAULT_BUNDLE_CHUNK_BYTES, buffer_pool=None):
        self.store = store

    @staticmethod
    def release_result(result) -> None:
        pass

    def put(self, data, *, type: Literal["dataproto", "dict"] = "dataproto", namespace="default", partition="default", stage="default", chunk_bytes=None, policy=None, config=None, field_schemas=None):
        pass

    def get(self, ref, *, type: typing.Literal['dict', 'dataproto'] = "dataproto", fields=None, batch_fields=None, non_tensor_fields=None, meta_info_keys=None, data_cls=None, destinations=None, rows=None):
        pass

    def cleanup_dataproto(self, ref) -> None:
        pass


export_ref = export_dataproto_ref
import_ref = import_dataproto_ref
