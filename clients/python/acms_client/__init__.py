"""Python client of the ACMS context service: :class:`AcmsClient` and the error types it raises."""

from .client import AcmsClient, source_name, tier_name
from .errors import AcmsError, InvalidArgumentError, ScopeViolationError, translate_error

__all__ = ["AcmsClient", "AcmsError", "InvalidArgumentError", "ScopeViolationError", "source_name", "tier_name", "translate_error"]
