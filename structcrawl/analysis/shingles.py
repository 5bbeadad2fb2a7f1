"""Vertex page clustering: shingle signatures and masked shingle vectors, vectorised with numpy.

Gulhane et al., *Web-scale information extraction with Vertex* (ICDE 2011),
§III-A "Page Clustering" and Algorithm 1 (seed ``003``):

1. **Shingles.**  The paper slides a window of ``l = 10`` tags over the page's
   tag sequence.  A crawl store keeps each page's set of tag paths (root-to-node
   tag sequences, ``sc_tagsets``), not the sequence, so the shingles are the
   tag paths themselves (``SHINGLE_PATHS`` = 1: each path is a run of tags
   from the root).  Sorted, those paths are a pre-order walk of the page's tag
   tree with repeated siblings listed once; ``--shingle N`` takes windows of N
   consecutive sorted paths instead (:func:`shingles`), the nearer analogue of
   the paper's window.  Measured over four hash seeds on six stores
   (docs/benchmarks.md, "Shingles vs UXClust", with points 4–6 below),
   windows of 2 suit the demo shop (mean F* 0.931 vs 0.922) and
   commons-math3 (0.948 vs 0.933) but not the four others (mean 0.870 vs
   0.886 over all six), so the default is the plain tag path.
2. **Signature**: 8 values, ``v[i]`` from hash function ``h_i`` minimised over
   the shingles.  The paper's ``h_i`` map a shingle to one byte and take the
   minimum byte; on a page of hundreds of shingles that minimum is 0 for most
   pages (``1 - (255/256)^200 ≈ 0.54`` per value at 200 shingles), so every
   large page would agree with every other.  Here ``h_i`` is a 64-bit hash
   (eight independent words of one BLAKE2b digest) and ``v[i]`` the low byte
   of the minimising value (b-bit minwise hashing, Li & König, WWW 2010): still
   one byte per value, and ``v[i] = v'[i]`` with probability ``J + (1 - J)/256``
   — the paper's property up to the 1/256 of chance agreement.
3. **Clustering** (Algorithm 1): pages whose signatures share at least
   ``MATCH`` = 6 of the 8 values, through the ``C(8,0) + C(8,1) + C(8,2) = 37``
   masked vectors covering each signature.  First pass: each masked vector's
   count is the number of pages it covers.  Second pass: for each distinct
   signature in increasing order of count, the covering masked vector of
   largest count is kept and the others lose the signature's pages.  Masked
   vectors whose count is under the cut-off are deleted.  Third pass: each page
   goes to the covering masked vector of largest count that is left, or is
   unclustered.  Ties go to the more specific vector (fewer wild cards, then
   wild cards at lower positions), and signatures of equal count are taken
   by value: the result does not depend on input order.

Departures, measured on the demo shop and six documentation sites
(docs/benchmarks.md, "Shingles vs UXClust"), where the paper's method alone
gave 0.45–0.77 F* against UXClust's 0.48–0.96 (mean over seeds 0.667; with
4 and the merge of 6 at 0.8, 0.781, better on every store; 5-8 as they
are now: below):

4. **The site's skeleton is not a shingle.**  The paper's pages are sequences
   of thousands of tags, where a template's own part outweighs what all
   templates share; a stored page here is a set of 30–900 tag paths, and the
   paths every template has (``html/body/div``, the menu's, the footer's) are
   most of a small page: two templates of the demo shop share 0.5–0.7 of
   their paths (Jaccard), so 6 of 8 values often agree across templates and
   the shop fell into 2 clusters.  Tag paths on at least ``SITE_SHARE`` of the
   site's pages are dropped from every page before shingling — the
   weighting of Vertex §III-B in its extreme form (paths of sections that all
   pages share carry no weight), and Chakrabarti & Mehta's template removal
   (seed ``000`` §3.4) at the level of tag paths.  "All pages" with a margin
   for odd pages (an error page, a frameset): measured over seven stores
   (docs/benchmarks.md), 0.95–0.99 give the same clusters on five and the
   best mean; at 0.9 and below, paths of a site's most common template count
   as skeleton (Erlang's reference pages, 0.74 → 0.64 mean F*); at 1.0 one
   odd page keeps the whole skeleton in.
5. **A signature match is verified on the sets** (:func:`verify`).  8
   one-byte values estimate a Jaccard coefficient coarsely, and a masked
   vector's two wild cards widen the estimate: pages of two templates share
   a 6/8 vector by chance, and Algorithm 1 gives them one cluster (the demo
   shop's books, authors and news articles at two hash seeds of four).  The
   distinct tag-path sets are at hand, so each page is checked against its
   cluster's fingerprint (the exact counterpart of the masked vector):
   alike at ``ALIKE`` = 6/8 — the paper's criterion, checked exactly instead
   of estimated — or showing no path the fingerprint lacks (the template
   with optional parts left out); any other set leaves as a part of its own.
   When two templates each bring 30 % of a cluster's pages or more, the
   fingerprint holds both and every page is alike to it, so the cluster is
   also split where its sets fall in two sides told apart, each of at least
   the cut-off and with ``OWN_PATHS`` = 2 tag paths or more on ≥ 90 % of its
   pages that the other side never shows (:func:`split_apart`; one path of
   its own is an either/or block of one template).  Mean F* over seeds 0–3:
   the demo shop 0.922 → 0.932 (category and search pages at seed 0),
   Erlang 0.894 → 0.901 (front pages and chapters at seed 3), no store
   lower.  (Splitting each cluster into the components of its sets that are 6/8
   alike pairwise did about as well, mean F* 0.884 vs 0.893, but cost a
   similarity join over every cluster's sets: 13 s for 23,000 distinct sets
   of one variable template, against one pass.)
6. **Fragments of one template are merged** (the UXClust merge, seed ``002``
   §3.3, on the verified parts): two pages of Jaccard 0.8 agree on 6 of 8
   values with probability 0.80, at 0.7 with 0.55, so on sites whose pages
   of one template differ in optional sections a class split into tens of
   clusters.  Each part's fingerprint is the tag paths (skeleton dropped) on
   at least ``occurrence`` (0.3) of its pages, counted exactly over its
   distinct sets; parts whose fingerprints have Jaccard ≥ ``similarity`` are
   united, and fingerprinting and merging repeat until nothing merges
   (:func:`merge_alike`).  The default is ``ALIKE`` again, one bar for
   "alike" throughout: mean F* over seeds 0–3 on six stores 0.886, against
   0.862 at UXClust's 0.8 (Haddock's and Erlang's fragments stay apart) and
   0.854 at 0.7 (the demo shop's author pages join its news articles).
   Clusters of fewer pages than the cut-off are then deleted, as Algorithm
   1 deletes its negligible masked vectors.  Verification and merge
   together took the mean F* over hash seeds 0–3 on seven stores from 0.831
   to 0.893, and its spread over seeds on the demo shop from 0.77–0.92 to
   0.91–0.94 (docs/benchmarks.md).
7. **A part told apart from the rest of its merged group leaves it**
   (:func:`merge_alike`).  The union is transitive, which is what joins a
   template's fragments, and it lets one small part bridge two templates:
   Erlang's 84 application front pages (a ``center`` title block, no ``h3``
   sections) were 0.76 alike to a 3-page chapter part, itself alike to the
   other chapters.  Each part is checked against the rest of its group with
   :func:`structcrawl.core.model.told_apart` on tag paths (each side has
   paths on ≥ 90 % of its pages that the other side never shows: the veto
   UXClust applies to link collections); a template's fragment is not told
   apart, since the rest shows its optional sections elsewhere.  Parts that
   leave are merged among themselves and checked again.  Mean F* over seeds
   0–3: Erlang 0.855 → 0.894, commons-math3 (stubs apart) 0.933 → 0.942, the
   five other stores unchanged.
8. **Pages left out go to the cluster they fit** (:func:`attach_left`):
   a page whose part fell under the cut-off, or whose signature no kept
   masked vector covered, is checked against each cluster's fingerprint as
   the verification checks a page, and joins the most alike one it fits —
   the counterpart of the third pass, which gives each page the kept
   vector of largest count that covers it.  Mean F* over seeds 0–3
   +0.00–0.01 on each store, none lower.

9. **A page's set holds its link sections too** (:func:`with_link_sections`).
   A stored tag path has no attributes; Vertex §III-A shingles the page's
   content, tags with their attributes.  The store keeps ids and classes in
   the link-collection paths only (Crescenzi et al. §2), so each page's set
   gets the link-collection paths it shows (marked ``@``), those on ≥
   ``LINK_SHARE`` (1 %) of the site's pages and on two sampled pages or more
   (the rest are spelled from one page's content: Erlang's ``h4#new-*``
   anchors).  Haddock's small module pages share 12 of their 13–14 tag
   paths with its letter indexes; ``div#interface`` against ``div#index``
   tells them apart.  The links of ``LINK_SAMPLES`` (10) pages per tag-path
   set are read (every page's links cost 25 s at a million pages, against
   0.2 s); the set's other pages carry its most common sampled set.
10. **A fragment joins the fuller group it lies inside** (:func:`_fragments_joined`,
    in the merge's fixed point): a group whose fingerprint is inside what a
    group of a larger fingerprint shows on ≥ ``FRAGMENT_SHOWN`` (5 %) of its
    pages is that template without most of its optional sections (Haddock's
    modules without an instances table: Jaccard 0.40 with the full pages'
    fingerprint, all of its paths among theirs); it joins the most alike such
    group.  On tag paths alone containment also holds between templates that
    share the site's layout (geos 0.98 → 0.71 mean F*); with the link
    sections each template's own collections break it.  9 and 10 together:
    mean F* over hash seeds 0–3 on seven stores 0.852 → 0.887 (ghc 0.856 →
    0.965, pango 0.557 → 0.635, demo 0.932 → 0.996; docs/benchmarks.md,
    "Second pass").

The work is per *distinct* set (the store shares one tag-path row among the
pages of a template; with the link sections, one set per sampled page and
one per tag-path row for its other pages) and per distinct signature; pages
only cost an array lookup.  The first and third passes are numpy passes over the 37 masks; the
second is sequential by nature (each choice changes the counts the next one
reads) and loops over distinct signatures only.

No SQL, no Scrapy: :func:`signatures` and :func:`cluster_signatures` work
from tag-path sets and counts, :func:`with_link_sections` from the sampled
pages' link-collection paths (:mod:`structcrawl.store.cluster` reads both
from a store).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from structcrawl.analysis.fingerprint import merge_groups
from structcrawl.core.model import FINGERPRINT_OCCURRENCE, SECTION_SHARE, told_apart
from structcrawl.core.unionfind import jaccard

#: Sorted tag paths per shingle (see the module docstring).
SHINGLE_PATHS = 1
#: Values per signature (the paper's 8-byte shingle vector).
SIGNATURE_VALUES = 8
#: Two pages are alike when their signatures agree on at least this many values (§III-A: 6 of 8).
MATCH = 6
#: Two tag-path sets are alike when their Jaccard is at least this: the 6 of 8 that a signature match
#: estimates, checked exactly (:func:`verify`) and the merge's default (:func:`merge_alike`).
ALIKE = MATCH / SIGNATURE_VALUES
#: Tag paths on at least this share of the site's pages are its skeleton, not a shingle (see the module).
SITE_SHARE = 0.99
#: A verified cluster is two templates when its pages fall in two sides that each have at least this many
#: tag paths of their own (:func:`split_apart`): one path of its own is an either/or block of one template.
OWN_PATHS = 2
#: A group is a fragment of a fuller one that shows every path of its fingerprint on at least this share of
#: its pages (:func:`_fragments_joined`): one of the fuller group's optional sections, not a stray page's path.
FRAGMENT_SHOWN = 0.05
#: Marks a link-collection path among a page's tag paths (a tag path starts with a tag name, never with it).
LINK_MARK = "@"
#: A link-collection path on fewer than this share of the site's pages is no section of a template
#: (:func:`with_link_sections`): most are spelled from one page's content (Erlang's ``h4#new-*`` anchors).
LINK_SHARE = 0.01
#: Pages per tag-path set whose link-collection paths are read (:func:`with_link_sections`).
LINK_SAMPLES = 10
#: A link-collection path shown by fewer sampled pages is that page's own, whatever pages its sample stands
#: for (:func:`with_link_sections`): a section is what pages share.
LINK_SAMPLED_PAGES = 2


def _masks() -> np.ndarray:
    """The 37 masks (bits kept), 8/8 first, then 7/8 and 6/8, each in index order."""
    out = []
    for wild in range(SIGNATURE_VALUES - MATCH + 1):
        for hidden in combinations(range(SIGNATURE_VALUES), wild):
            out.append(sum(0xFF << (8 * i) for i in range(SIGNATURE_VALUES) if i not in hidden))
    return np.array(out, dtype=np.uint64)


MASKS = _masks()


def shingles(tag_paths: Sequence[str], length: int = SHINGLE_PATHS) -> list[str]:
    """The shingles of a page: windows of ``length`` consecutive tag paths in sorted order (all of them as one
    shingle when there are fewer)."""
    paths = sorted(tag_paths)
    if len(paths) <= length:
        return ["\n".join(paths)] if paths else []
    return ["\n".join(paths[i:i + length]) for i in range(len(paths) - length + 1)]


def path_hashes(items: Sequence[str], seed: int = 0) -> np.ndarray:
    """``(len(items), 8)`` uint64: the eight hash values of each shingle (one keyed BLAKE2b digest each)."""
    key = seed.to_bytes(8, "little", signed=True)
    raw = b"".join(hashlib.blake2b(p.encode("utf-8"), digest_size=8 * SIGNATURE_VALUES, key=key).digest()
                   for p in items)
    return np.frombuffer(raw, dtype="<u8").reshape(len(items), SIGNATURE_VALUES)


def signatures(sets: Sequence[Sequence[int]], hashes: np.ndarray) -> np.ndarray:
    """One uint64 per set (8 one-byte values, value ``i`` in byte ``i``): the signature of each set of shingle
    indices into ``hashes`` (:func:`path_hashes`).  An empty set (a page without tags) gets 0."""
    sizes = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
    out = np.zeros(len(sets), dtype=np.uint64)
    nonempty = np.flatnonzero(sizes)
    if not len(nonempty):
        return out
    flat = np.fromiter((i for k in nonempty for i in sets[k]), dtype=np.int64, count=int(sizes.sum()))
    starts = np.concatenate(([0], np.cumsum(sizes[nonempty])[:-1]))
    minima = np.minimum.reduceat(hashes[flat], starts, axis=0)  # (sets, 8): the minimum of each h_i
    low = minima & np.uint64(0xFF)  # the low byte: uniform whatever the size of the set (see the module)
    shifts = np.arange(SIGNATURE_VALUES, dtype=np.uint64) * np.uint64(8)
    out[nonempty] = np.bitwise_or.reduce(low << shifts, axis=1)
    return out


def masked_text(value: int, mask: int) -> str:
    """A masked vector as the paper writes it: ``1f.03.*.a0.…`` (values in hex, ``*`` a wild card)."""
    return ".".join(f"{(value >> (8 * i)) & 0xFF:02x}" if (mask >> (8 * i)) & 0xFF else "*"
                    for i in range(SIGNATURE_VALUES))


@dataclass(frozen=True)
class ShingleCluster:
    id: int
    size: int  #: pages
    signature: str  #: its masked shingle vector (:func:`masked_text`); of its largest part when merged
    importance: int  #: the masked vector's count after the second pass (§III-A); summed over merged parts
    signatures: tuple[int, ...]  #: indices of the distinct signatures of its pages
    masked: tuple[str, ...]  #: its masked vectors: more than one when merged (:func:`merge_alike`), largest first


@dataclass(frozen=True)
class ShingleClustering:
    clusters: tuple[ShingleCluster, ...]  #: largest first; ids 1, 2, … in that order
    #: cluster id, 0: unclustered, per distinct signature (:func:`cluster_signatures`) or per distinct tag-path
    #: set (:func:`cluster_sets`)
    assignment: np.ndarray
    unclustered: int  #: pages
    candidates: int  #: distinct masked vectors of the first pass
    kept: int  #: masked vectors left after the cut-off
    cutoff: int
    signatures: int  #: distinct signatures clustered

    @property
    def pages(self) -> int:
        return sum(c.size for c in self.clusters) + self.unclustered


def cluster_signatures(values: np.ndarray, counts: np.ndarray, cutoff: int) -> ShingleClustering:
    """Algorithm 1 of Vertex over distinct signatures ``values`` (uint64) carried by ``counts`` pages each.

    ``cutoff``: masked vectors covering fewer pages after the second pass are
    deleted (the paper's threshold of 20 pages on samples of 2,000–20,000).
    """
    if cutoff < 1:
        raise ValueError(f"cutoff must be >= 1, got {cutoff}")
    values = np.asarray(values, dtype=np.uint64)
    counts = np.asarray(counts, dtype=np.int64)
    n = len(values)
    if len(np.unique(values)) != n:
        raise ValueError("signatures must be distinct (add up their pages' counts)")
    # first pass: every masked vector covering a signature, numbered; its count = pages covered
    masked = values[:, None] & MASKS[None, :]
    candidate = np.empty((n, len(MASKS)), dtype=np.int64)
    base = 0
    keys: list[tuple[int, np.ndarray]] = []  # per mask: its distinct masked values (candidate ids in order)
    for m in range(len(MASKS)):
        distinct, inverse = np.unique(masked[:, m], return_inverse=True)
        candidate[:, m] = base + inverse
        keys.append((m, distinct))
        base += len(distinct)
    total = np.bincount(candidate.ravel(), weights=np.repeat(counts, len(MASKS)), minlength=base).astype(np.int64)
    # second pass: distinct signatures by increasing count (value breaks ties), sequential
    live = total.tolist()
    rows = candidate.tolist()
    for k in np.lexsort((values, counts)).tolist():
        row = rows[k]
        best = max(row, key=live.__getitem__)  # first of the largest: the most specific covering vector
        w = int(counts[k])
        for c in row:
            if c != best:
                live[c] -= w
    final = np.array(live, dtype=np.int64)
    kept = final >= cutoff
    # third pass: the covering vector of largest count left, none if all were deleted
    score = np.where(kept, final, -1)[candidate]
    col = np.argmax(score, axis=1)
    chosen = candidate[np.arange(n), col]
    chosen[score[np.arange(n), col] < 0] = -1
    sizes: dict[int, int] = {}
    for c, w in zip(chosen.tolist(), counts.tolist()):
        if c >= 0:
            sizes[c] = sizes.get(c, 0) + w
    order = sorted(sizes, key=lambda c: (-sizes[c], c))
    ids = {c: i for i, c in enumerate(order, 1)}
    assignment = np.array([ids.get(c, 0) for c in chosen.tolist()], dtype=np.int64)
    starts = np.cumsum([0] + [len(d) for _, d in keys])
    clusters = []
    for c in order:
        m = int(np.searchsorted(starts, c, side="right")) - 1
        value = int(keys[m][1][c - starts[m]])
        text = masked_text(value, int(MASKS[m]))
        clusters.append(ShingleCluster(ids[c], sizes[c], text, int(final[c]),
                                       tuple(np.flatnonzero(assignment == ids[c]).tolist()), (text,)))
    unclustered = int(counts[assignment == 0].sum())
    return ShingleClustering(tuple(clusters), assignment, unclustered, base, int(kept.sum()), cutoff, n)


def site_skeleton(tag_path_sets: Sequence[Iterable[str]], counts: Sequence[int],
                  share: float = SITE_SHARE) -> frozenset[str]:
    """The tag paths on at least ``share`` of the pages (sets carried by ``counts`` pages each)."""
    pages: Counter[str] = Counter()
    for paths, n in zip(tag_path_sets, counts):
        for p in set(paths):
            pages[p] += n
    least = share * sum(counts)
    return frozenset(p for p, n in pages.items() if n >= least)


def _path_pages(sets: Sequence[frozenset[str]], counts: Sequence[int], members: Iterable[int]) -> tuple[Counter, int]:
    """The pages showing each tag path among the pages carrying the sets ``members``, and those pages."""
    pages: Counter[str] = Counter()
    total = 0
    for k in members:
        pages.update(dict.fromkeys(sets[k], counts[k]))
        total += counts[k]
    return pages, total


def _fingerprint(sets: Sequence[frozenset[str]], counts: Sequence[int], members: Iterable[int],
                 occurrence: float) -> frozenset[str]:
    """The tag paths on at least ``occurrence`` of the pages carrying the sets ``members``, counted exactly."""
    pages, total = _path_pages(sets, counts, members)
    return frozenset(p for p, n in pages.items() if n >= occurrence * total)


@dataclass(frozen=True)
class ShinglePart:
    """Distinct tag-path sets found alike, with the masked vector that keys them."""

    sets: tuple[int, ...]
    pages: int
    masked: str
    importance: int


def verify(result: ShingleClustering, values: np.ndarray, set_signature: np.ndarray,
           sets: Sequence[frozenset[str]], counts: Sequence[int],
           occurrence: float = FINGERPRINT_OCCURRENCE) -> list[ShinglePart]:
    """Each cluster of Algorithm 1 checked on its pages' tag-path sets: a set stays when its exact Jaccard with
    the cluster's fingerprint (the paths on at least ``occurrence`` of its pages) is at least :data:`ALIKE`,
    or when it shows no path the fingerprint lacks (the template with optional parts left out); each other
    set is a part of its own.  The sets that stay are then split where two templates are told apart
    (:func:`split_apart`, with the clustering's cut-off).

    ``values``: the distinct signatures ``result`` clustered; ``set_signature``: each set's index into
    them; sets whose signature is unclustered are left out.  A signature estimates the Jaccard of two sets
    from 8 one-byte values, and a masked vector's two wild cards widen the estimate: pages of two templates
    share a 6/8 vector by chance (the demo shop's books, authors and news articles in one cluster at hash
    seeds 1 and 3 of 0-3).  The masked vector stands for its cluster, and the cluster's fingerprint is its
    exact counterpart, so the paper's criterion — alike on 6 of 8 — is checked exactly between each page
    and its cluster: one pass over the cluster's distinct sets.  A page with few of its template's optional
    parts is far from a fingerprint that holds them all (Jaccard 7/12 with 1 part of 6), hence the second
    test.  The cluster keeps its masked vector and importance (when no set stays, every set does: there is
    nothing to tell them from), or the side of most pages does when it is split; a set that leaves, or
    another side, is keyed by the full (8/8) signature of its set of most pages, and its pages are its
    importance.
    """
    members: dict[int, list[int]] = {}
    for k, sig in enumerate(set_signature.tolist()):
        cid = int(result.assignment[sig])
        if cid:
            members.setdefault(cid, []).append(k)
    parts: list[ShinglePart] = []

    def keyed_by_itself(ks: list[int]) -> ShinglePart:  # by the full signature of its set of most pages
        top = min(ks, key=lambda k: (-counts[k], k))
        pages = sum(counts[k] for k in ks)
        return ShinglePart(tuple(ks), pages, masked_text(int(values[set_signature[top]]), int(MASKS[0])), pages)

    for c in result.clusters:
        fingerprint = _fingerprint(sets, counts, members[c.id], occurrence)
        alike = [k for k in members[c.id]
                 if sets[k] <= fingerprint or jaccard(sets[k], fingerprint) >= ALIKE] or members[c.id]
        first, *others = split_apart(alike, sets, counts, result.cutoff)
        parts.append(ShinglePart(tuple(first), sum(counts[k] for k in first), c.signature, c.importance))
        parts.extend(keyed_by_itself(side) for side in others)
        kept = set(alike)
        parts.extend(keyed_by_itself([k]) for k in members[c.id] if k not in kept)
    return parts


def split_apart(members: list[int], sets: Sequence[frozenset[str]], counts: Sequence[int],
                cutoff: int) -> list[list[int]]:
    """``members`` (indices of distinct sets) split while they fall in two sides told apart: the sets with
    a tag path and those without it, each side of at least ``cutoff`` pages and with at least
    :data:`OWN_PATHS` tag paths on ≥ ``SECTION_SHARE`` of its pages that the other side never shows.  The
    sides, the side of most pages first, each in ``members``' order.

    A cluster's fingerprint holds the paths on ≥ 30 % of its pages, so two templates that share one
    masked vector by chance and each bring a third of its pages or more make a fingerprint that both are
    alike to: Erlang's 84 front pages (a ``center`` title block) and 26 chapters (``h3`` sections) at hash
    seed 3, the demo shop's category and search pages at seed 0.  The path tried first is the one on most
    pages (then by name); the check is :func:`structcrawl.core.model.told_apart` with its evidence counted
    in distinct paths, as a side of one template's either/or block (a paragraph or a list in one place)
    has one path of its own.  Vectorised: one co-occurrence product per cluster and per side split off.
    """
    out: list[list[int]] = []
    todo = [list(members)]
    while todo:
        ks = todo.pop()
        sides = _two_sides(ks, sets, counts, cutoff) if len(ks) > 1 else None
        if sides is None:
            out.append(ks)
        else:
            todo.extend(sides)
    out.sort(key=lambda ks: (-sum(counts[k] for k in ks), min(ks)))
    return out


#: Distinct sets per block of the co-occurrence product of :func:`split_apart` (bounds its memory).
_BLOCK_SETS = 4096


def _two_sides(ks: list[int], sets: Sequence[frozenset[str]], counts: Sequence[int],
               cutoff: int) -> tuple[list[int], list[int]] | None:
    """The first split of :func:`split_apart` of the sets ``ks``, or None.  Memory: one block of
    :data:`_BLOCK_SETS` sets by the cluster's paths, and the candidate paths by its paths."""
    total = sum(counts[k] for k in ks)
    if total < 2 * cutoff:
        return None
    exact = np.float32 if total < 2 ** 24 else np.float64  # page counts stay exact, at half the memory
    paths = sorted({p for k in ks for p in sets[k]})
    index = {p: i for i, p in enumerate(paths)}
    sizes = np.array([len(sets[k]) for k in ks], dtype=np.int64)
    flat = np.fromiter((index[p] for k in ks for p in sets[k]), dtype=np.int64, count=int(sizes.sum()))
    pages = np.array([counts[k] for k in ks], dtype=exact)
    shown = np.bincount(flat, weights=np.repeat(pages, sizes), minlength=len(paths)).astype(exact)  # per path
    # a side is the sets with path a; only paths leaving both sides at least the cut-off
    cand = np.flatnonzero((shown >= cutoff) & (total - shown >= cutoff))
    if not len(cand):
        return None
    ends = np.cumsum(sizes)
    with_a = np.zeros((len(cand), len(paths)), dtype=exact)  # [a, q]: pages showing both a and q
    for start in range(0, len(ks), _BLOCK_SETS):
        stop = min(start + _BLOCK_SETS, len(ks))
        lo = int(ends[start - 1]) if start else 0
        has = np.zeros((stop - start, len(paths)), dtype=exact)
        has[np.repeat(np.arange(stop - start), sizes[start:stop]), flat[lo:int(ends[stop - 1])]] = 1
        with_a += (has[:, cand] * pages[start:stop, None]).T @ has
    without_a = shown[None, :] - with_a  # [a, q]: pages showing q but not a
    side = shown[cand][:, None]
    own_with = ((with_a >= SECTION_SHARE * side) & (without_a == 0)).sum(axis=1)
    own_without = ((without_a >= SECTION_SHARE * (total - side)) & (with_a == 0)).sum(axis=1)
    apart = cand[(own_with >= OWN_PATHS) & (own_without >= OWN_PATHS)]
    if not len(apart):
        return None
    a = paths[min(apart.tolist(), key=lambda i: (-shown[i], paths[i]))]
    return [k for k in ks if a in sets[k]], [k for k in ks if a not in sets[k]]


def _join_alike(pages_of: Sequence[tuple[Counter, int]], occurrence: float, similarity: float) -> list[list[int]]:
    """Indices of parts, those whose fingerprints are alike united and fragments joined to the group they are
    a fragment of (:func:`_fragments_joined`), to a fixed point (see :func:`merge_alike`); ``pages_of``: each
    part's pages per tag path and its pages (:func:`_path_pages`)."""
    groups: dict[int, list[int]] = {i: [i] for i in range(len(pages_of))}

    def pooled(ids: list[int]) -> tuple[Counter[str], int]:
        pages: Counter[str] = Counter()
        for i in ids:
            pages.update(pages_of[i][0])
        return pages, sum(pages_of[i][1] for i in ids)

    def fingerprint_of(ids: list[int]) -> frozenset[str]:
        pages, total = pooled(ids)
        return frozenset(p for p, n in pages.items() if n >= occurrence * total)

    prints = {g: fingerprint_of(ids) for g, ids in groups.items()}
    while True:
        merged_groups = merge_groups(prints, threshold=similarity)
        if len(merged_groups) == len(groups):
            merged_groups = _fragments_joined(prints, {g: pooled(ids) for g, ids in groups.items()})
            if len(merged_groups) == len(groups):
                break
        merged = {g[0]: sorted(i for k in g for i in groups[k]) for g in merged_groups}
        prints = {k: prints[k] if len(ids) == len(groups[k]) else fingerprint_of(ids) for k, ids in merged.items()}
        groups = merged
    return list(groups.values())


def _fragments_joined(prints: dict[int, frozenset[str]], pooled: dict[int, tuple[Counter, int]]) -> list[list[int]]:
    """Groups (keys of ``prints``) with each *fragment* joined to the group it is a fragment of, as sorted lists
    ordered by their first key: ``g`` is a fragment of ``h`` when ``h``'s fingerprint is larger (more paths;
    of as many, ``h`` has more pages) and ``h`` shows every path of ``g``'s fingerprint on at least
    :data:`FRAGMENT_SHOWN` of its pages (``pooled``: each group's pages per path and its pages).  A
    fragment joins the most alike such group (Jaccard of fingerprints, then pages, then key); every step
    goes to a larger fingerprint, so the joins form trees and no fragment bridges two templates.

    The pages of one template that lack most of its optional sections (Haddock's modules without an
    instances table, 13–42 tag paths against 20–88) have a fingerprint far from the full pages' in Jaccard
    (0.40) but inside what those pages show.  Containment alone also holds between templates that share
    the site's layout (one Doxygen template's paths inside another's: geos 0.98 → 0.71 mean F* on tag
    paths alone), so it is measured on the paths with their link sections (:func:`with_link_sections`),
    where each template's own link collections (``div#index`` against ``div#interface``) break it."""
    size = {g: total for g, (_, total) in pooled.items()}
    shown = {g: frozenset(p for p, n in pages.items() if n >= FRAGMENT_SHOWN * total)
             for g, (pages, total) in pooled.items()}
    rank = {g: (len(fp), size[g], -g) for g, fp in prints.items()}
    parent: dict[int, int] = {}
    for g, fp in prints.items():
        containers = [h for h in prints if rank[h] > rank[g] and fp <= shown[h]] if fp else []
        if containers:
            parent[g] = max(containers, key=lambda h: (jaccard(fp, prints[h]), size[h], -h))
    if not parent:
        return [[g] for g in sorted(prints)]

    def root(g: int) -> int:
        while g in parent:
            g = parent[g]
        return g

    trees: dict[int, list[int]] = {}
    for g in sorted(prints):
        trees.setdefault(root(g), []).append(g)
    return sorted(trees.values())


def _apart_from_rest(ids: list[int], pages_of: Sequence[tuple[Counter, int]]) -> list[int]:
    """The parts of one merged group told apart from the rest of it (:func:`structcrawl.core.model.told_apart`
    on tag paths: each side has paths on nearly all its pages that the other side never shows)."""
    total: Counter[str] = Counter()
    for i in ids:
        total.update(pages_of[i][0])
    pages = sum(pages_of[i][1] for i in ids)
    return [i for i in ids
            if told_apart(pages_of[i][0], pages_of[i][1], total - pages_of[i][0], pages - pages_of[i][1])]


def merge_alike(parts: Sequence[ShinglePart], sets: Sequence[frozenset[str]], counts: Sequence[int],
                occurrence: float = FINGERPRINT_OCCURRENCE, similarity: float = ALIKE) -> list[list[ShinglePart]]:
    """``parts`` (:func:`verify`) with those whose fingerprints are alike united, to a fixed point (UXClust
    §3.3's merge), then each group checked for parts of another template: each group's parts, largest
    first, groups largest first.

    A group's fingerprint: the tag paths (skeleton dropped) on at least ``occurrence`` of its pages, counted
    exactly over its distinct sets; two groups merge when their fingerprints' Jaccard is at least
    ``similarity`` — by default :data:`ALIKE`, the same 6 of 8 that joins pages.

    The union is transitive (single linkage), which is what joins the many fragments of a template with
    optional sections, but it also lets one small part bridge two templates: Erlang's application front
    pages (84 pages with a ``center`` title block, no ``h3`` sections) were 0.76 alike to a 3-page chapter
    part, itself alike to the other chapters, and all became one group.  So a part of a merged group that
    is *told apart* from the rest of its group — each side has tag paths on ≥ ``SECTION_SHARE`` (90 %) of
    its pages that the other side never shows (:func:`structcrawl.core.model.told_apart`, the veto UXClust
    applies to link collections, here on tag paths) — leaves it.  A fragment of a template with optional
    sections is not told apart from the rest, because the rest shows its sections elsewhere; another
    template is.  The parts that leave are merged among themselves (never back into the group they left)
    and checked again, until no part leaves.

    Besides alike fingerprints, a group whose fingerprint lies inside what a fuller group shows joins it
    (:func:`_fragments_joined`): the template's pages that lack most of its optional sections.
    """
    groups, _ = _merge_alike(parts, sets, counts, occurrence, similarity)
    return groups


def _merge_alike(parts: Sequence[ShinglePart], sets: Sequence[frozenset[str]], counts: Sequence[int],
                 occurrence: float, similarity: float) -> tuple[list[list[ShinglePart]], list[tuple[Counter, int]]]:
    """:func:`merge_alike`, and each group's pages per tag path and its pages."""
    out: list[list[int]] = []
    pages_of = [_path_pages(sets, counts, p.sets) for p in parts]
    index = list(range(len(parts)))  # the parts still to merge
    while index:
        left: list[int] = []
        round_pages = [pages_of[i] for i in index]
        for ids in _join_alike(round_pages, occurrence, similarity):
            apart = set(_apart_from_rest(ids, round_pages)) if len(ids) > 1 else set()
            if len(apart) == len(ids):  # nothing to tell them from
                apart = set()
            out.append([index[i] for i in ids if i not in apart])
            left.extend(index[i] for i in ids if i in apart)
        index = left
    order = sorted(out, key=lambda ids: (-sum(parts[i].pages for i in ids), min(ids)))
    pooled = []
    for ids in order:
        paths: Counter[str] = Counter()
        for i in ids:
            paths.update(pages_of[i][0])
        pooled.append((paths, sum(pages_of[i][1] for i in ids)))
    return [sorted((parts[i] for i in ids), key=lambda p: (-p.pages, p.sets)) for ids in order], pooled


def attach_left(members: list[list[int]], sets: Sequence[frozenset[str]], counts: Sequence[int],
                occurrence: float = FINGERPRINT_OCCURRENCE,
                prints: Sequence[frozenset[str]] | None = None) -> list[list[int]]:
    """Each cluster's sets (``members``) with the sets of no cluster that fit its fingerprint added, as
    :func:`verify` checks a set (Jaccard ≥ :data:`ALIKE`, or no path the fingerprint lacks); a set that fits
    several goes to the most alike, then the cluster of most pages.

    Algorithm 1's third pass gives each page the covering masked vector of largest count that is left after
    the cut-off; a page whose own part was deleted under the cut-off, or whose signature no kept vector
    covered, is given here the cluster it fits on its tag paths (mean F* over hash seeds 0-3 +0.00-0.01, no
    store lower: Erlang 0.901 → 0.904, ghc 0.848 → 0.854, commons-math3 0.942 → 0.948).  One Jaccard per
    left set and cluster.  ``prints``: the clusters' fingerprints when known."""
    if prints is None:
        prints = [_fingerprint(sets, counts, ks, occurrence) for ks in members]
    size = [sum(counts[k] for k in ks) for ks in members]
    placed = {k for ks in members for k in ks}
    out = [list(ks) for ks in members]
    for k in range(len(sets)):
        if k in placed or not prints:
            continue
        best = max(range(len(prints)), key=lambda i: (jaccard(sets[k], prints[i]), size[i], -i))
        if sets[k] <= prints[best] or jaccard(sets[k], prints[best]) >= ALIKE:
            out[best].append(k)
    return out


@dataclass(frozen=True)
class LinkSections:
    """Pages as the clustering sees them (:func:`with_link_sections`): distinct sets of tag paths and link
    sections, the pages carrying each, and which set each page of each tag-path set carries."""

    sets: list[frozenset[str]]  #: distinct: tag paths and link-collection paths (:data:`LINK_MARK` first)
    counts: list[int]  #: pages carrying each
    unsampled: np.ndarray  #: per tag-path set, the set of its pages whose links were not read
    sampled: list[list[int]]  #: per tag-path set, the set of each of its sampled pages, in their order


def with_link_sections(tag_path_sets: Sequence[Iterable[str]], counts: Sequence[int],
                       sampled_links: Sequence[Sequence[Iterable[str]]]) -> LinkSections:
    """Each page's tag paths with the link-collection paths it shows (marked with :data:`LINK_MARK`), those
    of the site's link sections only: paths on at least :data:`LINK_SHARE` of its pages and on at least
    :data:`LINK_SAMPLED_PAGES` of the sampled pages.

    A stored tag path has no attributes, so two templates that differ in their ids and classes only look
    alike: Haddock's small module pages share 12 of their 13–14 tag paths with its letter indexes, and
    only ``div#interface`` against ``div#alphabet``/``div#index`` tells them apart.  Vertex §III-A shingles
    the page's content, tags with their attributes; the store keeps attributes only in link-collection paths
    (Crescenzi et al. §2: each step's ``id`` and ``class``), so those are added to the page's set.
    ``sampled_links[k]``: the link-collection paths of each sampled page of tag-path set ``k`` (up to
    :data:`LINK_SAMPLES` of its ``counts[k]`` pages; reading every page's links costs 25 s at a million
    pages): each sampled page carries its own set, the others the set most of the samples carry (the
    first sample's among equals).  A path's pages are estimated from the samples."""
    shown: Counter[str] = Counter()
    samples: Counter[str] = Counter()
    for links, n in zip(sampled_links, counts):
        weight = n / len(links) if links else 0.0
        for page in links:
            for p in set(page):
                shown[p] += weight
                samples[p] += 1
    least = LINK_SHARE * sum(counts)
    index: dict[frozenset[str], int] = {}
    pages: list[int] = []
    unsampled = np.zeros(len(counts), dtype=np.int64)
    sampled: list[list[int]] = []

    def of(paths: frozenset[str], n: int) -> int:
        k = index.setdefault(paths, len(index))
        if k == len(pages):
            pages.append(0)
        pages[k] += n
        return k

    for k, (tags, n, links) in enumerate(zip(tag_path_sets, counts, sampled_links)):
        tags = frozenset(tags)
        own = [tags | {LINK_MARK + p for p in set(page) if shown[p] >= least and samples[p] >= LINK_SAMPLED_PAGES}
               for page in links]
        sampled.append([of(x, 1) for x in own])
        carried = Counter(own)
        most = max(carried.values(), default=0)
        unsampled[k] = of(next((x for x in own if carried[x] == most), tags), n - len(own))
    return LinkSections(list(index), pages, unsampled, sampled)


def cluster_sets(tag_path_sets: Sequence[Iterable[str]], counts: Sequence[int], cutoff: int, seed: int = 0,
                 length: int = SHINGLE_PATHS, occurrence: float = FINGERPRINT_OCCURRENCE,
                 similarity: float = ALIKE) -> tuple[ShingleClustering, np.ndarray]:
    """Vertex over distinct tag-path sets carried by ``counts`` pages each, the site's skeleton dropped
    (:func:`site_skeleton`), each cluster's sets verified and split where two templates are told apart
    (:func:`verify`, :func:`split_apart`), alike parts merged
    (:func:`merge_alike`), clusters of fewer than ``cutoff`` pages then deleted as Algorithm 1 deletes its
    negligible masked vectors, and the sets left given the cluster they fit (:func:`attach_left`, the third
    pass): the clustering (``assignment`` per set) and each set's cluster id (0: unclustered)."""
    if length < 1:
        raise ValueError(f"shingle length must be >= 1, got {length}")
    counts = [int(n) for n in counts]
    skeleton = site_skeleton(tag_path_sets, counts)
    reduced = [frozenset(s) - skeleton for s in tag_path_sets]
    pages = [shingles(list(s), length) for s in reduced]
    distinct = sorted({x for page in pages for x in page})
    index = {x: i for i, x in enumerate(distinct)}
    sigs = signatures([[index[x] for x in page] for page in pages], path_hashes(distinct, seed))
    values, inverse = np.unique(sigs, return_inverse=True)
    weights = np.bincount(inverse, weights=np.asarray(counts, dtype=np.int64), minlength=len(values))
    signed = cluster_signatures(values, weights.astype(np.int64), cutoff)
    parts = verify(signed, values, inverse, reduced, counts, occurrence)
    merged, pooled = _merge_alike(parts, reduced, counts, occurrence, similarity)
    kept = [i for i, g in enumerate(merged) if sum(p.pages for p in g) >= cutoff]
    groups = [merged[i] for i in kept]
    prints = [frozenset(p for p, n in pooled[i][0].items() if n >= occurrence * pooled[i][1]) for i in kept]
    members = attach_left([[k for p in g for k in p.sets] for g in groups], reduced, counts, occurrence, prints)
    order = sorted(range(len(groups)), key=lambda i: (-sum(counts[k] for k in members[i]), i))
    assignment = np.zeros(len(reduced), dtype=np.int64)
    clusters = []
    for cid, i in enumerate(order, 1):
        assignment[members[i]] = cid
        masked = tuple(dict.fromkeys(p.masked for p in groups[i]))
        clusters.append(ShingleCluster(cid, sum(counts[k] for k in members[i]), masked[0],
                                       sum(p.importance for p in groups[i]),
                                       tuple(sorted({int(inverse[k]) for k in members[i]})), masked))
    unclustered = sum(n for n, c in zip(counts, assignment.tolist()) if not c)
    result = ShingleClustering(tuple(clusters), assignment, unclustered, signed.candidates, signed.kept, cutoff,
                               len(values))
    return result, assignment
