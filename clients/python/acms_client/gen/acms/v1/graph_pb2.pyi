from ...acms.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
TERM_KIND_BLANK: TermKind
TERM_KIND_IRI: TermKind
TERM_KIND_LITERAL: TermKind
TERM_KIND_UNSPECIFIED: TermKind

class GetTriplesRequest(_message.Message):
    __slots__ = ["subject"]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    def __init__(self, subject: _Optional[str] = ...) -> None: ...

class GetTriplesResponse(_message.Message):
    __slots__ = ["boolean", "exhaustive", "index_generation", "metadata", "rows", "scope_id", "triples", "variables"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BOOLEAN_FIELD_NUMBER: _ClassVar[int]
    EXHAUSTIVE_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    TRIPLES_FIELD_NUMBER: _ClassVar[int]
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    boolean: bool
    exhaustive: bool
    index_generation: int
    metadata: _containers.ScalarMap[str, str]
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    scope_id: str
    triples: _containers.RepeatedCompositeFieldContainer[Triple]
    variables: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, triples: _Optional[_Iterable[_Union[Triple, _Mapping]]] = ..., variables: _Optional[_Iterable[str]] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., boolean: bool = ..., metadata: _Optional[_Mapping[str, str]] = ..., scope_id: _Optional[str] = ..., exhaustive: bool = ..., index_generation: _Optional[int] = ...) -> None: ...

class Row(_message.Message):
    __slots__ = ["bindings"]
    class BindingsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Term
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Term, _Mapping]] = ...) -> None: ...
    BINDINGS_FIELD_NUMBER: _ClassVar[int]
    bindings: _containers.MessageMap[str, Term]
    def __init__(self, bindings: _Optional[_Mapping[str, Term]] = ...) -> None: ...

class SparqlQueryRequest(_message.Message):
    __slots__ = ["query"]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    query: str
    def __init__(self, query: _Optional[str] = ...) -> None: ...

class SparqlQueryResponse(_message.Message):
    __slots__ = ["boolean", "exhaustive", "index_generation", "metadata", "rows", "scope_id", "triples", "variables"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BOOLEAN_FIELD_NUMBER: _ClassVar[int]
    EXHAUSTIVE_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    TRIPLES_FIELD_NUMBER: _ClassVar[int]
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    boolean: bool
    exhaustive: bool
    index_generation: int
    metadata: _containers.ScalarMap[str, str]
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    scope_id: str
    triples: _containers.RepeatedCompositeFieldContainer[Triple]
    variables: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, triples: _Optional[_Iterable[_Union[Triple, _Mapping]]] = ..., variables: _Optional[_Iterable[str]] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., boolean: bool = ..., metadata: _Optional[_Mapping[str, str]] = ..., scope_id: _Optional[str] = ..., exhaustive: bool = ..., index_generation: _Optional[int] = ...) -> None: ...

class SparqlQueryStreamRequest(_message.Message):
    __slots__ = ["query"]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    query: str
    def __init__(self, query: _Optional[str] = ...) -> None: ...

class SparqlQueryStreamResponse(_message.Message):
    __slots__ = ["boolean", "row", "triple", "variables"]
    BOOLEAN_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    TRIPLE_FIELD_NUMBER: _ClassVar[int]
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    boolean: bool
    row: Row
    triple: Triple
    variables: Variables
    def __init__(self, variables: _Optional[_Union[Variables, _Mapping]] = ..., row: _Optional[_Union[Row, _Mapping]] = ..., triple: _Optional[_Union[Triple, _Mapping]] = ..., boolean: bool = ...) -> None: ...

class Term(_message.Message):
    __slots__ = ["datatype", "kind", "language", "value"]
    DATATYPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    datatype: str
    kind: TermKind
    language: str
    value: str
    def __init__(self, kind: _Optional[_Union[TermKind, str]] = ..., value: _Optional[str] = ..., datatype: _Optional[str] = ..., language: _Optional[str] = ...) -> None: ...

class TraverseRequest(_message.Message):
    __slots__ = ["depth", "start"]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    depth: int
    start: str
    def __init__(self, start: _Optional[str] = ..., depth: _Optional[int] = ...) -> None: ...

class TraverseResponse(_message.Message):
    __slots__ = ["boolean", "exhaustive", "index_generation", "metadata", "rows", "scope_id", "triples", "variables"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BOOLEAN_FIELD_NUMBER: _ClassVar[int]
    EXHAUSTIVE_FIELD_NUMBER: _ClassVar[int]
    INDEX_GENERATION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    TRIPLES_FIELD_NUMBER: _ClassVar[int]
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    boolean: bool
    exhaustive: bool
    index_generation: int
    metadata: _containers.ScalarMap[str, str]
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    scope_id: str
    triples: _containers.RepeatedCompositeFieldContainer[Triple]
    variables: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, triples: _Optional[_Iterable[_Union[Triple, _Mapping]]] = ..., variables: _Optional[_Iterable[str]] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., boolean: bool = ..., metadata: _Optional[_Mapping[str, str]] = ..., scope_id: _Optional[str] = ..., exhaustive: bool = ..., index_generation: _Optional[int] = ...) -> None: ...

class Triple(_message.Message):
    __slots__ = ["object", "predicate", "subject"]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    object: Term
    predicate: Term
    subject: Term
    def __init__(self, subject: _Optional[_Union[Term, _Mapping]] = ..., predicate: _Optional[_Union[Term, _Mapping]] = ..., object: _Optional[_Union[Term, _Mapping]] = ...) -> None: ...

class Variables(_message.Message):
    __slots__ = ["names"]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class TermKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
