"""benchmarks/ on sys.path: tests import the synthetic-store generator from there (``import synthetic_store``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
