"""The quality of a model state against a URL ground truth: the Q and F* of the learning curve.

The real-site benchmark (benchmarks/real_sites.py) adds these to the ``history``
points of its models; the report plots them when present.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Hashable, Iterable, Mapping


def quality_point(
    page_class: Mapping[str, Hashable],
    page_schema: Callable[[str], Iterable[str]],
    label: Callable[[str], Hashable | None],
    reference_schemas: Mapping[Hashable, Iterable[str]] | None = None,
) -> dict[str, float]:
    """``{"q", "fstar"}`` of one model state.

    ``page_class``: URL → computed class of the pages modelled so far;
    ``page_schema(url)``: the page's schema (link-collection paths);
    ``label(url)``: its truth class (None: not in the truth, ignored);
    ``reference_schemas``: the schema σ_C of each truth class (Crescenzi et al. §4.3);
    when None, the union of the schemas of its pages modelled so far.
    F* is over the pages modelled so far.
    """
    from structcrawl.analysis.metrics import fstar, schema_quality

    truth: dict[str, Hashable] = {}
    assigned: dict[str, Hashable] = {}
    members: dict[Hashable, list[frozenset[str]]] = defaultdict(list)
    own_ref: dict[Hashable, set[str]] = defaultdict(set)
    for url, cid in page_class.items():
        lab = label(url)
        if lab is None:
            continue
        schema = frozenset(page_schema(url))
        truth[url] = lab
        assigned[url] = cid
        members[cid].append(schema)
        own_ref[lab] |= schema
    if not truth:
        return {"q": 0.0, "fstar": 0.0}
    ref = {k: frozenset(v) for k, v in (reference_schemas or own_ref).items()}
    q = schema_quality(dict(members), ref)["Q"]
    return {"q": round(q, 4), "fstar": round(fstar(assigned, truth), 4)}
