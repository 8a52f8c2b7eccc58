"""Python client of the ACMS context service.

:class:`AcmsClient` (blocking) and :class:`AsyncAcmsClient` (``grpc.aio``) have one method per RPC; failed
calls raise :class:`AcmsError` and its typed subclasses. The generated messages are in
``acms_client.gen.acms.v1`` (``scope_pb2``, ``tiers_pb2``, ...).
"""

from .async_client import AsyncAcmsClient
from .call_options import CallOptions
from .client import AcmsClient
from .connection import DEFAULT_URL, url_from_env
from .document_batches import document_batches
from .enums import Role, RoleName, Source, SourceName, Tier, TierName, source_name, tier_name
from .errors import AcmsError, BadRequestError, FieldViolation, ScopeViolationError, error_from_rpc

__all__ = [
    "DEFAULT_URL",
    "AcmsClient",
    "AcmsError",
    "AsyncAcmsClient",
    "BadRequestError",
    "CallOptions",
    "FieldViolation",
    "Role",
    "RoleName",
    "ScopeViolationError",
    "Source",
    "SourceName",
    "Tier",
    "TierName",
    "document_batches",
    "error_from_rpc",
    "source_name",
    "tier_name",
    "url_from_env",
]
