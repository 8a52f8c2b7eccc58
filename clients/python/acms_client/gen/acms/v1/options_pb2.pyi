from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

ACCESS_FIELD_NUMBER: _ClassVar[int]
ACCESS_READ: Access
ACCESS_SCOPED: Access
ACCESS_UNSPECIFIED: Access
ACCESS_WRITE: Access
DESCRIPTOR: _descriptor.FileDescriptor
REF_FIELD_NUMBER: _ClassVar[int]
REF_KIND_IRI: RefKind
REF_KIND_PROJECT: RefKind
REF_KIND_RESOURCE_ID: RefKind
REF_KIND_UKO_URI: RefKind
REF_KIND_UNSPECIFIED: RefKind
access: _descriptor.FieldDescriptor
ref: _descriptor.FieldDescriptor

class RefKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Access(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
