"""What the live-server tests share: the server they run against, the data they seed, and small builders."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from acms_client.gen.acms.v1 import graph_pb2

OUTSIDE_RESOURCE = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
"""A well-formed ULID no test scope holds."""

VOCAB = "https://acms.example/vocab/"
DOC = "https://acms.example/doc/"

DOCS = {
    "onboarding.md": "# Onboarding\n\nNew engineers start with the onboarding checklist: laptop, accounts, and a buddy.",
    "deploy.md": "# Deploying\n\nDeploys run from the release pipeline after review; roll back with the previous tag.",
    "oncall.md": "# On-call\n\nThe on-call engineer answers pages within fifteen minutes and writes an incident note.",
    "style.md": "# Code style\n\nFormat with the project formatter; name files after their main export.",
}


@dataclass(frozen=True)
class Server:
    url: str
    api_key: str
    project_base: str
    outside_project: str
    embedding_dim: int

    def unit_vector(self, axis: int) -> list[float]:
        """A vector of the server's dimension pointing along ``axis``."""
        return [1.0 if i == axis else 0.0 for i in range(self.embedding_dim)]

    def new_project(self) -> str:
        """A project name no earlier run used."""
        return f"{self.project_base}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class Seed:
    """A project with one resource (alias ``handbook``) holding DOCS with one embedded chunk each (document i
    along axis i), a small graph, and a scope over the project."""

    project: str
    resource_id: str
    scope_id: str


def iri(value: str) -> graph_pb2.Term:
    return graph_pb2.Term(kind=graph_pb2.TERM_KIND_IRI, value=value)


def triple(subject: str, predicate: str, obj: str, literal: bool = False) -> graph_pb2.Triple:
    """``<DOC subject> <VOCAB predicate> <DOC obj>`` (or the literal ``obj``)."""
    return graph_pb2.Triple(
        subject=iri(DOC + subject),
        predicate=iri(VOCAB + predicate),
        object=graph_pb2.Term(kind=graph_pb2.TERM_KIND_LITERAL, value=obj) if literal else iri(DOC + obj),
    )
