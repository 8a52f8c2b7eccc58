from ...acms.v1 import options_pb2 as _options_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ROLE_EXECUTOR: Role
ROLE_REVIEWER: Role
ROLE_STRATEGIST: Role
ROLE_UNSPECIFIED: Role
TIER_COLD: Tier
TIER_HOT: Tier
TIER_UNSPECIFIED: Tier
TIER_WARM: Tier

class DemoteFragmentRequest(_message.Message):
    __slots__ = ["fragment_id"]
    FRAGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    fragment_id: str
    def __init__(self, fragment_id: _Optional[str] = ...) -> None: ...

class DemoteFragmentResponse(_message.Message):
    __slots__ = ["displaced", "fragment"]
    DISPLACED_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    displaced: _containers.RepeatedCompositeFieldContainer[DisplacedFragment]
    fragment: Fragment
    def __init__(self, fragment: _Optional[_Union[Fragment, _Mapping]] = ..., displaced: _Optional[_Iterable[_Union[DisplacedFragment, _Mapping]]] = ...) -> None: ...

class DisplacedFragment(_message.Message):
    __slots__ = ["evicted", "fragment_id", "from_tier", "to_tier"]
    EVICTED_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_TIER_FIELD_NUMBER: _ClassVar[int]
    TO_TIER_FIELD_NUMBER: _ClassVar[int]
    evicted: bool
    fragment_id: str
    from_tier: Tier
    to_tier: Tier
    def __init__(self, fragment_id: _Optional[str] = ..., from_tier: _Optional[_Union[Tier, str]] = ..., to_tier: _Optional[_Union[Tier, str]] = ..., evicted: bool = ...) -> None: ...

class EvictLruRequest(_message.Message):
    __slots__ = ["count", "tier"]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    count: int
    tier: Tier
    def __init__(self, tier: _Optional[_Union[Tier, str]] = ..., count: _Optional[int] = ...) -> None: ...

class EvictLruResponse(_message.Message):
    __slots__ = ["fragment_ids"]
    FRAGMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    fragment_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, fragment_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Fragment(_message.Message):
    __slots__ = ["content", "created_at", "fragment_id", "last_accessed_at", "metadata", "project_name", "resource_id", "summary", "tier", "token_count", "updated_at"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_ACCESSED_AT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROJECT_NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    content: str
    created_at: _timestamp_pb2.Timestamp
    fragment_id: str
    last_accessed_at: _timestamp_pb2.Timestamp
    metadata: _containers.ScalarMap[str, str]
    project_name: str
    resource_id: str
    summary: str
    tier: Tier
    token_count: int
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, fragment_id: _Optional[str] = ..., content: _Optional[str] = ..., tier: _Optional[_Union[Tier, str]] = ..., resource_id: _Optional[str] = ..., project_name: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., token_count: _Optional[int] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., last_accessed_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., summary: _Optional[str] = ...) -> None: ...

class GetForActorRequest(_message.Message):
    __slots__ = ["include_full_content", "project_names", "role"]
    INCLUDE_FULL_CONTENT_FIELD_NUMBER: _ClassVar[int]
    PROJECT_NAMES_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    include_full_content: bool
    project_names: _containers.RepeatedScalarFieldContainer[str]
    role: Role
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., project_names: _Optional[_Iterable[str]] = ..., include_full_content: bool = ...) -> None: ...

class GetForActorResponse(_message.Message):
    __slots__ = ["fragments", "scope_id"]
    FRAGMENTS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    fragments: _containers.RepeatedCompositeFieldContainer[Fragment]
    scope_id: str
    def __init__(self, fragments: _Optional[_Iterable[_Union[Fragment, _Mapping]]] = ..., scope_id: _Optional[str] = ...) -> None: ...

class GetFragmentRequest(_message.Message):
    __slots__ = ["fragment_id"]
    FRAGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    fragment_id: str
    def __init__(self, fragment_id: _Optional[str] = ...) -> None: ...

class GetFragmentResponse(_message.Message):
    __slots__ = ["fragment"]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    fragment: Fragment
    def __init__(self, fragment: _Optional[_Union[Fragment, _Mapping]] = ...) -> None: ...

class GetMetricsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetMetricsResponse(_message.Message):
    __slots__ = ["cold_hits", "cold_max_decisions", "cold_population", "cold_tokens", "demotions", "evictions", "hot_hits", "hot_max_tokens", "hot_misses", "hot_population", "hot_tokens", "misses", "promotions", "warm_hits", "warm_max_decisions", "warm_misses", "warm_population", "warm_tokens"]
    COLD_HITS_FIELD_NUMBER: _ClassVar[int]
    COLD_MAX_DECISIONS_FIELD_NUMBER: _ClassVar[int]
    COLD_POPULATION_FIELD_NUMBER: _ClassVar[int]
    COLD_TOKENS_FIELD_NUMBER: _ClassVar[int]
    DEMOTIONS_FIELD_NUMBER: _ClassVar[int]
    EVICTIONS_FIELD_NUMBER: _ClassVar[int]
    HOT_HITS_FIELD_NUMBER: _ClassVar[int]
    HOT_MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    HOT_MISSES_FIELD_NUMBER: _ClassVar[int]
    HOT_POPULATION_FIELD_NUMBER: _ClassVar[int]
    HOT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MISSES_FIELD_NUMBER: _ClassVar[int]
    PROMOTIONS_FIELD_NUMBER: _ClassVar[int]
    WARM_HITS_FIELD_NUMBER: _ClassVar[int]
    WARM_MAX_DECISIONS_FIELD_NUMBER: _ClassVar[int]
    WARM_MISSES_FIELD_NUMBER: _ClassVar[int]
    WARM_POPULATION_FIELD_NUMBER: _ClassVar[int]
    WARM_TOKENS_FIELD_NUMBER: _ClassVar[int]
    cold_hits: int
    cold_max_decisions: int
    cold_population: int
    cold_tokens: int
    demotions: int
    evictions: int
    hot_hits: int
    hot_max_tokens: int
    hot_misses: int
    hot_population: int
    hot_tokens: int
    misses: int
    promotions: int
    warm_hits: int
    warm_max_decisions: int
    warm_misses: int
    warm_population: int
    warm_tokens: int
    def __init__(self, hot_hits: _Optional[int] = ..., hot_misses: _Optional[int] = ..., warm_hits: _Optional[int] = ..., warm_misses: _Optional[int] = ..., hot_population: _Optional[int] = ..., warm_population: _Optional[int] = ..., cold_population: _Optional[int] = ..., hot_tokens: _Optional[int] = ..., warm_tokens: _Optional[int] = ..., cold_tokens: _Optional[int] = ..., promotions: _Optional[int] = ..., demotions: _Optional[int] = ..., evictions: _Optional[int] = ..., cold_hits: _Optional[int] = ..., misses: _Optional[int] = ..., hot_max_tokens: _Optional[int] = ..., warm_max_decisions: _Optional[int] = ..., cold_max_decisions: _Optional[int] = ...) -> None: ...

class PromoteFragmentRequest(_message.Message):
    __slots__ = ["fragment_id"]
    FRAGMENT_ID_FIELD_NUMBER: _ClassVar[int]
    fragment_id: str
    def __init__(self, fragment_id: _Optional[str] = ...) -> None: ...

class PromoteFragmentResponse(_message.Message):
    __slots__ = ["displaced", "fragment"]
    DISPLACED_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    displaced: _containers.RepeatedCompositeFieldContainer[DisplacedFragment]
    fragment: Fragment
    def __init__(self, fragment: _Optional[_Union[Fragment, _Mapping]] = ..., displaced: _Optional[_Iterable[_Union[DisplacedFragment, _Mapping]]] = ...) -> None: ...

class StoreFragmentRequest(_message.Message):
    __slots__ = ["fragment"]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    fragment: Fragment
    def __init__(self, fragment: _Optional[_Union[Fragment, _Mapping]] = ...) -> None: ...

class StoreFragmentResponse(_message.Message):
    __slots__ = ["displaced", "fragment"]
    DISPLACED_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    displaced: _containers.RepeatedCompositeFieldContainer[DisplacedFragment]
    fragment: Fragment
    def __init__(self, fragment: _Optional[_Union[Fragment, _Mapping]] = ..., displaced: _Optional[_Iterable[_Union[DisplacedFragment, _Mapping]]] = ...) -> None: ...

class Tier(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
