from ...acms.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchRequest(_message.Message):
    __slots__ = ["max_results", "query"]
    MAX_RESULTS_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    max_results: int
    query: str
    def __init__(self, query: _Optional[str] = ..., max_results: _Optional[int] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ["exhaustive", "index_generation", "results", "scope_id"]
    EXHAUSTIVE_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    exhaustive: bool
    index_generation: int
    results: _containers.RepeatedCompositeFieldContainer[TextResult]
    scope_id: str
    def __init__(self, results: _Optional[_Iterable[_Union[TextResult, _Mapping]]] = ..., scope_id: _Optional[str] = ..., exhaustive: bool = ..., index_generation: _Optional[int] = ...) -> None: ...

class SearchStreamRequest(_message.Message):
    __slots__ = ["max_results", "query"]
    MAX_RESULTS_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    max_results: int
    query: str
    def __init__(self, query: _Optional[str] = ..., max_results: _Optional[int] = ...) -> None: ...

class SearchStreamResponse(_message.Message):
    __slots__ = ["result"]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: TextResult
    def __init__(self, result: _Optional[_Union[TextResult, _Mapping]] = ...) -> None: ...

class TextResult(_message.Message):
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
