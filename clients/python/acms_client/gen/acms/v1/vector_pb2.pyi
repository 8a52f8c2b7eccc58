from ...acms.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SimilaritySearchRequest(_message.Message):
    __slots__ = ["embedding", "min_score", "top_k"]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    embedding: _containers.RepeatedScalarFieldContainer[float]
    min_score: float
    top_k: int
    def __init__(self, embedding: _Optional[_Iterable[float]] = ..., top_k: _Optional[int] = ..., min_score: _Optional[float] = ...) -> None: ...

class SimilaritySearchResponse(_message.Message):
    __slots__ = ["exhaustive", "index_generation", "results", "scope_id"]
    EXHAUSTIVE_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    exhaustive: bool
    index_generation: int
    results: _containers.RepeatedCompositeFieldContainer[VectorResult]
    scope_id: str
    def __init__(self, results: _Optional[_Iterable[_Union[VectorResult, _Mapping]]] = ..., scope_id: _Optional[str] = ..., exhaustive: bool = ..., index_generation: _Optional[int] = ...) -> None: ...

class SimilaritySearchStreamRequest(_message.Message):
    __slots__ = ["embedding", "min_score", "top_k"]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    embedding: _containers.RepeatedScalarFieldContainer[float]
    min_score: float
    top_k: int
    def __init__(self, embedding: _Optional[_Iterable[float]] = ..., top_k: _Optional[int] = ..., min_score: _Optional[float] = ...) -> None: ...

class SimilaritySearchStreamResponse(_message.Message):
    __slots__ = ["result"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: VectorResult
    def __init__(self, result: _Optional[_Union[VectorResult, _Mapping]] = ...) -> None: ...

class VectorResult(_message.Message):
    __slots__ = ["content", "metadata", "path", "resource_id", "score", "uko_uri"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    UKO_URI_FIELD_NUMBER: _ClassVar[int]
    content: str
    metadata: _containers.ScalarMap[str, str]
    path: str
    resource_id: str
    score: float
    uko_uri: str
    def __init__(self, uko_uri: _Optional[str] = ..., content: _Optional[str] = ..., score: _Optional[float] = ..., metadata: _Optional[_Mapping[str, str]] = ..., resource_id: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...
