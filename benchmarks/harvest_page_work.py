"""The harvest spider's work a page against a CrawlSpider's, on the same pages, same run, no HTTP.

    python benchmarks/harvest_page_work.py MODEL --corpus geos [--rounds 3]

Issue 14 asks for harvest throughput ≥ 0.9 × a plain CrawlSpider's; ``benchmarks/harvest.py``
measures it over HTTP, where the order of responses and the machine's load move a single run by
±0.2.  This is its processor side, every page of a corpus (``benchmarks/corpora.py``) read from disk:
(a) what a ``CrawlSpider`` does with a response, ``LinkExtractor().extract_links`` on Scrapy's
``HtmlResponse``; (b) what the harvest spider's callback does with it: the page features and tree
(``core.features.extract_with_tree``), the class (the model's ``classify``), the link collections the
plan reads (``harvest_collections``), and the item's fields for a page of a class that has fields.
Interleaved round by round, best of rounds (process time); prints each in ms a page and b / a.
The plan's own bookkeeping and Scrapy's engine (the same for both spiders) are not in it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scrapy.http import HtmlResponse  # noqa: E402
from scrapy.linkextractors import LinkExtractor  # noqa: E402

import corpora  # noqa: E402
from structcrawl.analysis.extract import Extractor  # noqa: E402
from structcrawl.analysis.harvestplan import harvest_collections  # noqa: E402
from structcrawl.core.features import extract_with_tree  # noqa: E402
from structcrawl.sitemodel import parse_model  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a model of the corpus (structcrawl crawl … -o MODEL)")
    ap.add_argument("--corpus", default="geos", choices=sorted(corpora.CORPORA))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    document = json.loads(Path(args.model).read_text(encoding="utf-8"))
    model, extractor = parse_model(document, args.model), Extractor(document)
    speller = model.site_model.speller
    root = corpora.ensure(args.corpus, lambda m: print(m, file=sys.stderr))
    base = document["site"]["start_url"].rsplit("/", 1)[0] + "/"
    pages = []
    for rel in corpora.html_pages(args.corpus):
        with open(os.path.join(root, rel), "rb") as fh:
            pages.append((base + rel, fh.read()))
    headers = {"Content-Type": "text/html"}
    links = LinkExtractor()

    def crawlspider() -> None:
        for url, body in pages:
            links.extract_links(HtmlResponse(url, body=body, headers=headers))

    def harvest() -> None:
        for url, body in pages:
            features, tree = extract_with_tree(body, url, "text/html")
            cls, _cost = model.classify_page(features)
            harvest_collections(features, speller.collections(features.collections), speller.spell)
            if cls in extractor.classes:
                if tree is None:
                    extractor.extract(HtmlResponse(url, body=body, headers=headers).text, cls)
                else:
                    extractor.extract_tree(tree, cls)

    best = {crawlspider: float("inf"), harvest: float("inf")}
    for _ in range(args.rounds):
        for work in best:
            if work is harvest:  # each round classifies with a fresh model: no schema remembered
                model = parse_model(document, args.model)
            start = time.process_time()
            work()
            best[work] = min(best[work], time.process_time() - start)
    a, b = (1000 * best[w] / len(pages) for w in (crawlspider, harvest))
    print(f"{args.corpus}: {len(pages)} pages; CrawlSpider's LinkExtractor {a:.2f} ms a page, "
          f"the harvest's callback {b:.2f} ms a page, ratio {b / a:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
