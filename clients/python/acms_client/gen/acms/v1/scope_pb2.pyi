from ...acms.v1 import options_pb2 as _options_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetScopeRequest(_message.Message):
    __slots__ = ["scope_id"]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    scope_id: str
    def __init__(self, scope_id: _Optional[str] = ...) -> None: ...

class GetScopeResponse(_message.Message):
    __slots__ = ["scope"]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    scope: ResourceScope
    def __init__(self, scope: _Optional[_Union[ResourceScope, _Mapping]] = ...) -> None: ...

class NarrowScopeRequest(_message.Message):
    __slots__ = ["deny_resource_ids", "exclude_paths", "projects"]
    DENY_RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_PATHS_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    deny_resource_ids: _containers.RepeatedScalarFieldContainer[str]
    exclude_paths: _containers.RepeatedScalarFieldContainer[str]
    projects: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, deny_resource_ids: _Optional[_Iterable[str]] = ..., projects: _Optional[_Iterable[str]] = ..., exclude_paths: _Optional[_Iterable[str]] = ...) -> None: ...

class NarrowScopeResponse(_message.Message):
    __slots__ = ["scope"]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    scope: ResourceScope
    def __init__(self, scope: _Optional[_Union[ResourceScope, _Mapping]] = ...) -> None: ...

class ResolveScopeRequest(_message.Message):
    __slots__ = ["exclude_paths", "exclude_resources", "expand_descendants", "include_paths", "include_resources", "projects", "temporal_scope"]
    EXCLUDE_PATHS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    EXPAND_DESCENDANTS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_PATHS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_SCOPE_FIELD_NUMBER: _ClassVar[int]
    exclude_paths: _containers.RepeatedScalarFieldContainer[str]
    exclude_resources: _containers.RepeatedScalarFieldContainer[str]
    expand_descendants: bool
    include_paths: _containers.RepeatedScalarFieldContainer[str]
    include_resources: _containers.RepeatedScalarFieldContainer[str]
    projects: _containers.RepeatedScalarFieldContainer[str]
    temporal_scope: str
    def __init__(self, projects: _Optional[_Iterable[str]] = ..., include_resources: _Optional[_Iterable[str]] = ..., exclude_resources: _Optional[_Iterable[str]] = ..., include_paths: _Optional[_Iterable[str]] = ..., exclude_paths: _Optional[_Iterable[str]] = ..., temporal_scope: _Optional[str] = ..., expand_descendants: bool = ...) -> None: ...

class ResolveScopeResponse(_message.Message):
    __slots__ = ["scope"]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    scope: ResourceScope
    def __init__(self, scope: _Optional[_Union[ResourceScope, _Mapping]] = ...) -> None: ...

class ResourceScope(_message.Message):
    __slots__ = ["created_at", "denied_resource_ids", "exclude_paths", "exclude_resources", "expand_descendants", "include_paths", "include_resources", "parent_scope_id", "project_names", "resource_ids", "scope_id", "temporal_scope"]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DENIED_RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_PATHS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    EXPAND_DESCENDANTS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_PATHS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RESOURCES_FIELD_NUMBER: _ClassVar[int]
    PARENT_SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_NAMES_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_SCOPE_FIELD_NUMBER: _ClassVar[int]
    created_at: _timestamp_pb2.Timestamp
    denied_resource_ids: _containers.RepeatedScalarFieldContainer[str]
    exclude_paths: _containers.RepeatedScalarFieldContainer[str]
    exclude_resources: _containers.RepeatedScalarFieldContainer[str]
    expand_descendants: bool
    include_paths: _containers.RepeatedScalarFieldContainer[str]
    include_resources: _containers.RepeatedScalarFieldContainer[str]
    parent_scope_id: str
    project_names: _containers.RepeatedScalarFieldContainer[str]
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    scope_id: str
    temporal_scope: str
    def __init__(self, scope_id: _Optional[str] = ..., resource_ids: _Optional[_Iterable[str]] = ..., project_names: _Optional[_Iterable[str]] = ..., temporal_scope: _Optional[str] = ..., include_resources: _Optional[_Iterable[str]] = ..., exclude_resources: _Optional[_Iterable[str]] = ..., include_paths: _Optional[_Iterable[str]] = ..., exclude_paths: _Optional[_Iterable[str]] = ..., parent_scope_id: _Optional[str] = ..., expand_descendants: bool = ..., denied_resource_ids: _Optional[_Iterable[str]] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ValidateProjectScopeRequest(_message.Message):
    __slots__ = ["requested_projects"]
    REQUESTED_PROJECTS_FIELD_NUMBER: _ClassVar[int]
    requested_projects: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, requested_projects: _Optional[_Iterable[str]] = ...) -> None: ...

class ValidateProjectScopeResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ValidateResourceScopeRequest(_message.Message):
    __slots__ = ["requested_resource_ids"]
    REQUESTED_RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    requested_resource_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, requested_resource_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ValidateResourceScopeResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...
