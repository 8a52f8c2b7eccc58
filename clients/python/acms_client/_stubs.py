"""Makes the generated stubs under clients/python/gen importable as ``acms.v1`` and ``google.rpc``.

The stubs are generated from proto/ by clients/python/generate.sh (and checked by .ci/run); they import each
other as ``acms.v1.*``, so their root directory has to be on ``sys.path``.
"""

import os
import sys

_GEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gen")
if os.path.isdir(_GEN) and _GEN not in sys.path:
    sys.path.insert(0, _GEN)

from acms.v1 import errors_pb2  # noqa: E402
from acms.v1 import graph_pb2, graph_pb2_grpc  # noqa: E402
from acms.v1 import index_pb2, index_pb2_grpc  # noqa: E402
from acms.v1 import rag_pb2, rag_pb2_grpc  # noqa: E402
from acms.v1 import registry_pb2, registry_pb2_grpc  # noqa: E402
from acms.v1 import scope_pb2, scope_pb2_grpc  # noqa: E402
from acms.v1 import text_pb2, text_pb2_grpc  # noqa: E402
from acms.v1 import tiers_pb2, tiers_pb2_grpc  # noqa: E402
from acms.v1 import vector_pb2, vector_pb2_grpc  # noqa: E402
from google.rpc import error_details_pb2, status_pb2  # noqa: E402

__all__ = [
    "errors_pb2",
    "error_details_pb2",
    "graph_pb2",
    "graph_pb2_grpc",
    "index_pb2",
    "index_pb2_grpc",
    "rag_pb2",
    "rag_pb2_grpc",
    "registry_pb2",
    "registry_pb2_grpc",
    "scope_pb2",
    "scope_pb2_grpc",
    "status_pb2",
    "text_pb2",
    "text_pb2_grpc",
    "tiers_pb2",
    "tiers_pb2_grpc",
    "vector_pb2",
    "vector_pb2_grpc",
]
