"""Plain names for the enums a caller passes often (tiers, roles, hybrid sources), beside the generated values.

Every method that takes one accepts either the name (``"hot"``) or the generated value (``tiers_pb2.TIER_HOT``).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from .gen.acms.v1 import rag_pb2, tiers_pb2

TierName: TypeAlias = Literal["hot", "warm", "cold"]
RoleName: TypeAlias = Literal["strategist", "executor", "reviewer"]
SourceName: TypeAlias = Literal["text", "vector", "graph"]

Tier: TypeAlias = tiers_pb2.Tier.ValueType | TierName
Role: TypeAlias = tiers_pb2.Role.ValueType | RoleName
Source: TypeAlias = rag_pb2.Source.ValueType | SourceName

_TIERS: dict[str, tiers_pb2.Tier.ValueType] = {"hot": tiers_pb2.TIER_HOT, "warm": tiers_pb2.TIER_WARM, "cold": tiers_pb2.TIER_COLD}
_ROLES: dict[str, tiers_pb2.Role.ValueType] = {
    "strategist": tiers_pb2.ROLE_STRATEGIST,
    "executor": tiers_pb2.ROLE_EXECUTOR,
    "reviewer": tiers_pb2.ROLE_REVIEWER,
}
_SOURCES: dict[str, rag_pb2.Source.ValueType] = {"text": rag_pb2.SOURCE_TEXT, "vector": rag_pb2.SOURCE_VECTOR, "graph": rag_pb2.SOURCE_GRAPH}


def tier_value(tier: Tier) -> tiers_pb2.Tier.ValueType:
    """The ``Tier`` value of ``"hot"``, ``"warm"`` or ``"cold"`` (a value is returned as it is)."""
    return _TIERS[tier] if isinstance(tier, str) else tier


def role_value(role: Role) -> tiers_pb2.Role.ValueType:
    """The ``Role`` value of ``"strategist"``, ``"executor"`` or ``"reviewer"`` (a value is returned as it is)."""
    return _ROLES[role] if isinstance(role, str) else role


def source_value(source: Source) -> rag_pb2.Source.ValueType:
    """The ``Source`` value of ``"text"``, ``"vector"`` or ``"graph"`` (a value is returned as it is)."""
    return _SOURCES[source] if isinstance(source, str) else source


def tier_name(tier: tiers_pb2.Tier.ValueType) -> str:
    """``hot``, ``warm``, ``cold`` (or ``unspecified``) for a ``Tier`` value."""
    return next((name for name, value in _TIERS.items() if value == tier), "unspecified")


def source_name(source: rag_pb2.Source.ValueType) -> str:
    """``text``, ``vector``, ``graph`` (or ``unspecified``) for a ``Source`` value."""
    return next((name for name, value in _SOURCES.items() if value == source), "unspecified")
