from ...acms.v1 import graph_pb2 as _graph_pb2
from ...acms.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChunkInput(_message.Message):
    __slots__ = ["embedding", "text"]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    embedding: _containers.RepeatedScalarFieldContainer[float]
    text: str
    def __init__(self, text: _Optional[str] = ..., embedding: _Optional[_Iterable[float]] = ...) -> None: ...

class DeleteDocumentsRequest(_message.Message):
    __slots__ = ["paths", "resource_id"]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    paths: _containers.RepeatedScalarFieldContainer[str]
    resource_id: str
    def __init__(self, resource_id: _Optional[str] = ..., paths: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteDocumentsResponse(_message.Message):
    __slots__ = ["count", "index_generation"]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    count: int
    index_generation: int
    def __init__(self, count: _Optional[int] = ..., index_generation: _Optional[int] = ...) -> None: ...

class DocumentInput(_message.Message):
    __slots__ = ["chunks", "content", "metadata", "path"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[ChunkInput]
    content: str
    metadata: _containers.ScalarMap[str, str]
    path: str
    def __init__(self, path: _Optional[str] = ..., content: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., chunks: _Optional[_Iterable[_Union[ChunkInput, _Mapping]]] = ...) -> None: ...

class PutTriplesRequest(_message.Message):
    __slots__ = ["replace", "resource_id", "triples"]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    TRIPLES_FIELD_NUMBER: _ClassVar[int]
    replace: bool
    resource_id: str
    triples: _containers.RepeatedCompositeFieldContainer[_graph_pb2.Triple]
    def __init__(self, resource_id: _Optional[str] = ..., triples: _Optional[_Iterable[_Union[_graph_pb2.Triple, _Mapping]]] = ..., replace: bool = ...) -> None: ...

class PutTriplesResponse(_message.Message):
    __slots__ = ["count", "index_generation"]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    count: int
    index_generation: int
    def __init__(self, count: _Optional[int] = ..., index_generation: _Optional[int] = ...) -> None: ...

class RebuildRequest(_message.Message):
    __slots__ = ["full_rebuild", "resource_ids"]
    FULL_REBUILD_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    full_rebuild: bool
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, resource_ids: _Optional[_Iterable[str]] = ..., full_rebuild: bool = ...) -> None: ...

class RebuildResponse(_message.Message):
    __slots__ = ["documents_reindexed", "index_generation", "resources_rebuilt"]
    DOCUMENTS_REINDEXED_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_REBUILT_FIELD_NUMBER: _ClassVar[int]
    documents_reindexed: int
    index_generation: int
    resources_rebuilt: int
    def __init__(self, index_generation: _Optional[int] = ..., resources_rebuilt: _Optional[int] = ..., documents_reindexed: _Optional[int] = ...) -> None: ...

class UpsertDocumentsRequest(_message.Message):
    __slots__ = ["documents", "resource_id"]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[DocumentInput]
    resource_id: str
    def __init__(self, resource_id: _Optional[str] = ..., documents: _Optional[_Iterable[_Union[DocumentInput, _Mapping]]] = ...) -> None: ...

class UpsertDocumentsResponse(_message.Message):
    __slots__ = ["chunks_indexed", "documents_upserted", "index_generation", "messages_received", "vectors_indexed"]
    CHUNKS_INDEXED_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_UPSERTED_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    VECTORS_INDEXED_FIELD_NUMBER: _ClassVar[int]
    chunks_indexed: int
    documents_upserted: int
    index_generation: int
    messages_received: int
    vectors_indexed: int
    def __init__(self, documents_upserted: _Optional[int] = ..., chunks_indexed: _Optional[int] = ..., vectors_indexed: _Optional[int] = ..., messages_received: _Optional[int] = ..., index_generation: _Optional[int] = ...) -> None: ...
