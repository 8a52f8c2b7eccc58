from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class ScopeViolation(_message.Message):
    __slots__ = ["project_names", "reason", "resource_ids", "scope_project_names"]
    PROJECT_NAMES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_PROJECT_NAMES_FIELD_NUMBER: _ClassVar[int]
    project_names: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    scope_project_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, resource_ids: _Optional[_Iterable[str]] = ..., scope_project_names: _Optional[_Iterable[str]] = ..., project_names: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ...) -> None: ...
