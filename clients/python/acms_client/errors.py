"""Python exceptions for the ACMS error contract (API.md, "Errors").

Every failed call raises an :class:`AcmsError` carrying the gRPC status code and message. A refusal for
reaching outside the scope raises :class:`ScopeViolationError` with the offending ids decoded from the
``acms.v1.ScopeViolation`` detail, and a bad request field raises :class:`InvalidArgumentError` with the
``google.rpc.BadRequest`` field violations, so an agent can react to what was wrong instead of parsing text.
"""

from typing import List, Optional, Sequence, Tuple

import grpc

from .gen.acms.v1 import errors_pb2
from .gen.google.rpc import error_details_pb2, status_pb2

_DETAILS_KEY = "grpc-status-details-bin"


class AcmsError(Exception):
    """A call the server refused or failed, with its gRPC status code."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name.lower()}: {message}")
        self.code = code
        self.message = message


class ScopeViolationError(AcmsError):
    """PERMISSION_DENIED because the request named resources or projects outside the call's scope."""

    def __init__(
        self,
        message: str,
        resource_ids: Sequence[str],
        project_names: Sequence[str],
        scope_project_names: Sequence[str],
        reason: str,
    ):
        super().__init__(grpc.StatusCode.PERMISSION_DENIED, message)
        self.resource_ids: List[str] = list(resource_ids)
        self.project_names: List[str] = list(project_names)
        self.scope_project_names: List[str] = list(scope_project_names)
        self.reason = reason


class InvalidArgumentError(AcmsError):
    """INVALID_ARGUMENT, with the ``(field, description)`` pairs of the BadRequest detail."""

    def __init__(self, message: str, field_violations: Sequence[Tuple[str, str]]):
        super().__init__(grpc.StatusCode.INVALID_ARGUMENT, message)
        self.field_violations: List[Tuple[str, str]] = list(field_violations)

    @property
    def fields(self) -> List[str]:
        """The names of the offending fields."""
        return [f for f, _ in self.field_violations]


def _status_details(err: grpc.RpcError) -> Optional[status_pb2.Status]:
    trailers = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    for key, value in trailers or ():
        if key == _DETAILS_KEY:
            status = status_pb2.Status()
            status.ParseFromString(value)
            return status
    return None


def translate_error(err: grpc.RpcError) -> AcmsError:
    """Turns a grpcio error into the matching :class:`AcmsError` subclass, decoding its protobuf details."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    message = (err.details() if hasattr(err, "details") else None) or ""
    status = _status_details(err)
    if status is not None:
        if status.message:
            message = status.message
        for detail in status.details:
            if detail.Is(errors_pb2.ScopeViolation.DESCRIPTOR):
                violation = errors_pb2.ScopeViolation()
                detail.Unpack(violation)
                return ScopeViolationError(
                    message,
                    violation.resource_ids,
                    violation.project_names,
                    violation.scope_project_names,
                    violation.reason,
                )
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                return InvalidArgumentError(message, [(v.field, v.description) for v in bad.field_violations])
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidArgumentError(message, [])
    return AcmsError(code, message)
