"""tracesql: SQL analytics over GPU profiler traces (PyTorch profiler / Kineto and JAX Chrome-trace JSON)."""
__version__ = "0.1.0"  # before the imports: tracesql.ingest reads it

from tracesql.api.dataset import Dataset, open  # noqa: E402,A004
from tracesql.errors import DatasetError, EmptySelection, TraceError  # noqa: E402
from tracesql.ingest import ingest  # noqa: E402

__all__ = ["ingest", "open", "Dataset", "TraceError", "DatasetError", "EmptySelection", "__version__"]
