"""The messages of an ``UpsertDocuments`` client stream, from documents."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .gen.acms.v1 import index_pb2


def document_batches(
    resource_id: str, documents: Iterable[index_pb2.DocumentInput], batch_size: int = 64
) -> Iterator[index_pb2.UpsertDocumentsRequest]:
    """``documents`` as ``UpsertDocumentsRequest`` messages of ``batch_size`` documents each, lazily (a large
    folder is never held in memory at once)::

        docs = (DocumentInput(path=p, content=read(p)) for p in paths)
        acms.upsert_documents(document_batches(resource_id, docs))
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    batch: list[index_pb2.DocumentInput] = []
    for document in documents:
        batch.append(document)
        if len(batch) == batch_size:
            yield index_pb2.UpsertDocumentsRequest(resource_id=resource_id, documents=batch)
            batch = []
    if batch:
        yield index_pb2.UpsertDocumentsRequest(resource_id=resource_id, documents=batch)
