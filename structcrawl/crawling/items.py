"""The item the structure spider yields for each page that enters the site model.

One item per page modelled in this run (a resumed job's replayed pages are
not yielded again), in model-step order, so that ``-O pages.jsonl``, feed
exports and item pipelines see the crawl as it learns.  Items go out as
callback output (a step that a signal handler ran — a duplicate dropped, a
redirect refused — gives its items to the next callback, or to the close
the spider starts); when Scrapy itself closes the crawl (CLOSESPIDER_TIMEOUT,
Ctrl-C) the items of such steps since the last callback are not sent.  Fields:

``url``
    The page's URL (after redirects), as in the model's members.
``class``
    The id of the class the page joined at its model step.  Online refinement
    may later fold that class into another (the model file's ``merges`` list
    says which: follow ``merged`` → ``kept``); the model file is the final word.
``status``
    The HTTP status of the response.
``cost``
    enc(p|C) of Crescenzi et al. §3.2: the bits that code the page in its
    class at that step (class-schema indexes, missing paths, paths written out
    in full, URLs), with the model's costs.
``link_collection``
    The link collection the page was fetched from: ``{"source": class id of
    the pages holding the links, "path": the links' tag path}`` as in the
    model's ``class_links``; ``null`` for the start URL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from structcrawl.core.model import encoding_cost
from structcrawl.sitemodel import MDL_DECIMALS

if TYPE_CHECKING:
    from structcrawl.core.frontier import Batch
    from structcrawl.core.model import SiteModel


def modelled_page(model: SiteModel, url: str, status: int | None, batch: Batch) -> dict[str, Any]:
    """The item of a page that is in ``model`` (right after its model step)."""
    class_id = model.page_class[url]
    # an audit's page: the collection it was drawn from
    key = batch.key if batch.key is not None else dict(zip(batch.urls, batch.sources)).get(url)
    page = model.pages[url]
    cost = encoding_cost(page.schema, page.url_count, model.classes[class_id].path_counts, model.costs)
    return {
        "url": url,
        "class": class_id,
        "status": status,
        "cost": round(cost, MDL_DECIMALS),
        "link_collection": None if key is None else {"source": key[0], "path": key[1]},
    }
