"""Which class of a site model is a page?  The pure part of ``structcrawl classify``: no I/O.

A page's class is the class minimising its encoding cost under the model (``SiteModel.classify``,
Crescenzi et al. §4.1), or None when no class fits better than a class of its own; the cost is that
encoding cost in bits.  Reading inputs (URLs, local files, stdin) and writing the JSON lines is
:mod:`structcrawl.commands.classify`'s.
"""

from __future__ import annotations

from structcrawl.core.features import PageFeatures, extract
from structcrawl.sitemodel import LoadedModel


class Classifier:
    """A loaded site model as a classifier of HTML pages (``LoadedModel.classify_page`` takes features)."""

    def __init__(self, model: LoadedModel) -> None:
        self.model = model

    def classify(self, body: bytes, url: str, content_type: str | None = None) -> tuple[int | None, float]:
        """(class id or None, encoding cost in bits) of the HTML ``body`` served at ``url``."""
        return self.classify_features(extract(body, url, content_type))

    def classify_features(self, features: PageFeatures) -> tuple[int | None, float]:
        """The same for a page already parsed (the harvest spider needs its links too)."""
        return self.model.classify_page(features)
