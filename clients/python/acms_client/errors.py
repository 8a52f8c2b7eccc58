"""The exceptions every client call raises: the ACMS error contract (API.md, "Errors") as Python types.

A failed call raises :class:`AcmsError` with the gRPC status code. Its subclasses carry the decoded protobuf
details, so an agent reacts to what was wrong instead of parsing text: :class:`ScopeViolationError` holds the
``acms.v1.ScopeViolation`` fields, :class:`BadRequestError` the ``google.rpc.BadRequest`` field violations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from .gen.acms.v1 import errors_pb2

_DETAILS_KEY = "grpc-status-details-bin"


class AcmsError(Exception):
    """A call the server refused or that failed, with its gRPC status code.

    ``details`` holds the ``google.rpc.Status`` details as sent (``google.protobuf.Any``), for details this
    client does not decode; ``retry_delay`` is the server's ``google.rpc.RetryInfo`` advice in seconds, when
    it gave one (a caller over its quota gets ``RESOURCE_EXHAUSTED`` with it).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        details: Sequence[any_pb2.Any] = (),
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(f"{code.name.lower()}: {message}")
        self.code = code
        self.message = message
        self.details: list[any_pb2.Any] = list(details)
        self.retry_delay = retry_delay


class ScopeViolationError(AcmsError):
    """``PERMISSION_DENIED``: the request named resources or projects outside the call's scope.

    ``resource_ids`` and ``project_names`` are the offenders, ``scope_project_names`` the projects of the
    call's scope, ``reason`` why the server refused.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        violation: errors_pb2.ScopeViolation,
        details: Sequence[any_pb2.Any] = (),
    ) -> None:
        super().__init__(code, message, details)
        self.resource_ids: list[str] = list(violation.resource_ids)
        self.project_names: list[str] = list(violation.project_names)
        self.scope_project_names: list[str] = list(violation.scope_project_names)
        self.reason: str = violation.reason


@dataclass(frozen=True)
class FieldViolation:
    """One field of a request the server refused, and why."""

    field: str
    description: str


class BadRequestError(AcmsError):
    """``INVALID_ARGUMENT``: a request field failed a precondition; ``field_violations`` name the fields."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        field_violations: Sequence[FieldViolation],
        details: Sequence[any_pb2.Any] = (),
    ) -> None:
        super().__init__(code, message, details)
        self.field_violations: list[FieldViolation] = list(field_violations)

    @property
    def fields(self) -> list[str]:
        """The names of the offending fields, in the server's order."""
        return [v.field for v in self.field_violations]


def _status_of(err: grpc.RpcError) -> status_pb2.Status | None:
    """The ``google.rpc.Status`` of the ``grpc-status-details-bin`` trailer, if the server sent one."""
    if isinstance(err, grpc.aio.AioRpcError):
        trailers = [(key, value) for key, value in err.trailing_metadata() or ()]
    else:
        trailers = [(m.key, m.value) for m in err.trailing_metadata() or ()]
    for key, value in trailers:
        if key == _DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status()
            status.ParseFromString(value)
            return status
    return None


def error_from_rpc(err: grpc.RpcError) -> AcmsError:
    """The :class:`AcmsError` (or subclass) for a grpcio error, sync or ``grpc.aio``, its details decoded."""
    if not hasattr(err, "code"):
        # grpcio raises a bare RpcError (no status) for a few local failures.
        return AcmsError(grpc.StatusCode.UNKNOWN, str(err))
    code, message = err.code(), err.details() or ""
    status = _status_of(err)
    if status is None:
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            return BadRequestError(code, message, [])
        return AcmsError(code, message)
    # The Status in the trailer is the server's own record of the error: its message wins over grpc-message.
    message = status.message or message
    details: list[any_pb2.Any] = list(status.details)
    retry_delay: float | None = None
    for detail in details:
        if detail.Is(errors_pb2.ScopeViolation.DESCRIPTOR):
            violation = errors_pb2.ScopeViolation()
            detail.Unpack(violation)
            return ScopeViolationError(code, message, violation, details)
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            violations = [FieldViolation(str(v.field), str(v.description)) for v in bad.field_violations]
            return BadRequestError(code, message, violations, details)
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            retry_delay = float(info.retry_delay.seconds) + float(info.retry_delay.nanos) / 1e9
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return BadRequestError(code, message, [], details)
    return AcmsError(code, message, details, retry_delay)


__all__ = ["AcmsError", "BadRequestError", "FieldViolation", "ScopeViolationError", "error_from_rpc"]
