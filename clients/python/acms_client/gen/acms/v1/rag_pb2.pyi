from ...acms.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
SOURCE_GRAPH: Source
SOURCE_TEXT: Source
SOURCE_UNSPECIFIED: Source
SOURCE_VECTOR: Source

class Contribution(_message.Message):
    __slots__ = ["rank", "score", "source"]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    score: float
    source: Source
    def __init__(self, source: _Optional[_Union[Source, str]] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ...) -> None: ...

class FetchContentRequest(_message.Message):
    __slots__ = ["uko_uris"]
    UKO_URIS_FIELD_NUMBER: _ClassVar[int]
    uko_uris: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, uko_uris: _Optional[_Iterable[str]] = ...) -> None: ...

class FetchContentResponse(_message.Message):
    __slots__ = ["exhaustive", "index_generation", "items", "missing", "scope_id"]
    EXHAUSTIVE_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    exhaustive: bool
    index_generation: int
    items: _containers.RepeatedCompositeFieldContainer[FetchedItem]
    missing: _containers.RepeatedScalarFieldContainer[str]
    scope_id: str
    def __init__(self, items: _Optional[_Iterable[_Union[FetchedItem, _Mapping]]] = ..., missing: _Optional[_Iterable[str]] = ..., scope_id: _Optional[str] = ..., exhaustive: bool = ..., index_generation: _Optional[int] = ...) -> None: ...

class FetchedItem(_message.Message):
    __slots__ = ["chunk_index", "content", "metadata", "path", "resource_id", "uko_uri"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CHUNK_INDEX_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    UKO_URI_FIELD_NUMBER: _ClassVar[int]
    chunk_index: int
    content: str
    metadata: _containers.ScalarMap[str, str]
    path: str
    resource_id: str
    uko_uri: str
    def __init__(self, uko_uri: _Optional[str] = ..., resource_id: _Optional[str] = ..., path: _Optional[str] = ..., content: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., chunk_index: _Optional[int] = ...) -> None: ...

class HybridResult(_message.Message):
    __slots__ = ["content", "contributions", "metadata", "path", "resource_id", "score", "uko_uri"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CONTRIBUTIONS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    UKO_URI_FIELD_NUMBER: _ClassVar[int]
    content: str
    contributions: _containers.RepeatedCompositeFieldContainer[Contribution]
    metadata: _containers.ScalarMap[str, str]
    path: str
    resource_id: str
    score: float
    uko_uri: str
    def __init__(self, uko_uri: _Optional[str] = ..., resource_id: _Optional[str] = ..., path: _Optional[str] = ..., content: _Optional[str] = ..., score: _Optional[float] = ..., contributions: _Optional[_Iterable[_Union[Contribution, _Mapping]]] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class HybridSearchRequest(_message.Message):
    __slots__ = ["embedding", "min_score", "query", "rrf_k", "sources", "top_k", "weights"]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    embedding: _containers.RepeatedScalarFieldContainer[float]
    min_score: float
    query: str
    rrf_k: int
    sources: _containers.RepeatedScalarFieldContainer[Source]
    top_k: int
    weights: _containers.RepeatedCompositeFieldContainer[SourceWeight]
    def __init__(self, query: _Optional[str] = ..., embedding: _Optional[_Iterable[float]] = ..., top_k: _Optional[int] = ..., min_score: _Optional[float] = ..., rrf_k: _Optional[int] = ..., sources: _Optional[_Iterable[_Union[Source, str]]] = ..., weights: _Optional[_Iterable[_Union[SourceWeight, _Mapping]]] = ...) -> None: ...

class HybridSearchResponse(_message.Message):
    __slots__ = ["exhaustive", "failed_sources", "index_generation", "partial", "results", "scope_id"]
    EXHAUSTIVE_FIELD_NUMBER: _ClassVar[int]
    FAILED_SOURCES_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    exhaustive: bool
    failed_sources: _containers.RepeatedScalarFieldContainer[Source]
    index_generation: int
    partial: bool
    results: _containers.RepeatedCompositeFieldContainer[HybridResult]
    scope_id: str
    def __init__(self, results: _Optional[_Iterable[_Union[HybridResult, _Mapping]]] = ..., scope_id: _Optional[str] = ..., exhaustive: bool = ..., index_generation: _Optional[int] = ..., failed_sources: _Optional[_Iterable[_Union[Source, str]]] = ..., partial: bool = ...) -> None: ...

class HybridSearchStreamRequest(_message.Message):
    __slots__ = ["embedding", "min_score", "query", "rrf_k", "sources", "top_k", "weights"]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    embedding: _containers.RepeatedScalarFieldContainer[float]
    min_score: float
    query: str
    rrf_k: int
    sources: _containers.RepeatedScalarFieldContainer[Source]
    top_k: int
    weights: _containers.RepeatedCompositeFieldContainer[SourceWeight]
    def __init__(self, query: _Optional[str] = ..., embedding: _Optional[_Iterable[float]] = ..., top_k: _Optional[int] = ..., min_score: _Optional[float] = ..., rrf_k: _Optional[int] = ..., sources: _Optional[_Iterable[_Union[Source, str]]] = ..., weights: _Optional[_Iterable[_Union[SourceWeight, _Mapping]]] = ...) -> None: ...

class HybridSearchStreamResponse(_message.Message):
    __slots__ = ["result"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: HybridResult
    def __init__(self, result: _Optional[_Union[HybridResult, _Mapping]] = ...) -> None: ...

class SourceWeight(_message.Message):
    __slots__ = ["source", "weight"]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    source: Source
    weight: float
    def __init__(self, source: _Optional[_Union[Source, str]] = ..., weight: _Optional[float] = ...) -> None: ...

class Source(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
