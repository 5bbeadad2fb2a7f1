"""Real template-generated sites for the benchmarks: Debian documentation packages, with URL ground truth.

The labelling rules of geos and commons-math3 are copied from the project's
development corpora notes (they must not be needed at run time); pango is our
third generator family (gi-docgen).  Each corpus: package, generator, html
``root`` inside the extracted package, ``entry`` page, ordered ``classes``
``(name, regex)`` matched with ``re.search`` against the page path relative to
the root (``/``-separated, no leading ``/``, unquoted); the first match wins,
no match = not in the truth.  ``coarse`` optionally merges truth classes for a
second score (e.g. templates that differ only by name); ``stubs`` optionally
splits off the pages of a truth class that carry a marker (commons-math3's
"No usage of" class-use stubs) for another score.  ``markers`` instead of
``classes`` labels a page by its content: ordered ``(name, bytes regex)``
searched in the file, for generators whose file names do not tell the
template (DocBook's refentry, chapter, section pages).

``extra`` corpora (rustdoc from the local Rust toolchain) are not in any
benchmark's default list: ``--corpus rust-std``.

``ensure(corpus)`` fetches a missing package with ``apt-get download`` and
unpacks it with ``dpkg -x`` into ``$CORPORA_DIR`` (default
``~/.cache/structcrawl-corpora``); nothing is installed system-wide.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import subprocess

BASE = os.environ.get("CORPORA_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "structcrawl-corpora")

_JAVADOC_TOP = (r"^(index|overview-summary|overview-tree|overview-frame|allclasses-frame|"
                r"allclasses-noframe|allclasses|allclasses-index|allpackages-index|"
                r"constant-values|deprecated-list|help-doc|serialized-form)\.html$")

CORPORA = {
    "geos": dict(
        package="libgeos-doc", version="3.11.1-1", generator="Doxygen 1.9.4",
        root="libgeos-doc/usr/share/doc/libgeos-dev/html",
        entry="index.html",
        classes=[
            ("source_listing", r"_8(h|hpp|c|cpp)_source\.html$"),
            ("file", r"_8(h|hpp|c|cpp)\.html$"),
            ("class_members", r"^(class|struct|union)[^/]*-members\.html$"),
            ("class", r"^(class|struct|union)[^/]*\.html$"),
            ("member_index", r"^(functions|namespacemembers|globals)(_[\w~]+)?\.html$"),
            ("namespace", r"^namespace[^/]*\.html$"),
            ("directory", r"^dir_[0-9a-f]+\.html$"),
            ("group", r"^group__[^/]*\.html$"),
            ("toplevel_misc", r"^(index|annotated|hierarchy|files|modules|pages|todo|"
                              r"deprecated|cpp_iface|c_iface|namespaces)\.html$"),
        ]),
    "commons-math3": dict(
        package="libcommons-math3-java-doc", version="3.6.1-3", generator="Javadoc (JDK 8, frames)",
        root="libcommons-math3-java-doc/usr/share/doc/libcommons-math3-java/api",
        # index.html is a <frameset> whose only <a> is inside <noframes>: start at the overview
        entry="overview-summary.html",
        # 418 of the 926 class-use pages say only "No usage of …": navigation bars, no
        # content links.  Scored once more with them as a class of their own
        stubs=("class_use", "class_use_stub", b">No usage of "),
        classes=[
            ("class_use", r"/class-use/[^/]+\.html$"),
            ("package_summary", r"(^|/)package-summary\.html$"),
            ("package_tree", r"(^|/)package-tree\.html$"),
            ("package_use", r"(^|/)package-use\.html$"),
            ("package_frame", r"(^|/)package-frame\.html$"),
            ("index_all", r"^index-all\.html$"),
            ("toplevel_misc", _JAVADOC_TOP),
            ("class", r"^org/.+/[^/]+\.html$"),
        ]),
    "pango": dict(
        package="libpango1.0-doc", version="1.50.12+ds-1", generator="gi-docgen 2022",
        root="libpango1.0-doc/usr/share/doc/libpango1.0-doc/reference/Pango",
        entry="index.html",
        # gi-docgen writes one page per symbol, its kind as the file-name prefix (one template each)
        classes=[
            ("method", r"^method\.[^/]+\.html$"),
            ("ctor", r"^ctor\.[^/]+\.html$"),
            ("type_func", r"^type_func\.[^/]+\.html$"),
            ("vfunc", r"^vfunc\.[^/]+\.html$"),
            ("func", r"^func\.[^/]+\.html$"),
            ("class", r"^class\.[^/]+\.html$"),
            ("struct", r"^struct\.[^/]+\.html$"),
            ("enum", r"^(enum|flags|error)\.[^/]+\.html$"),
            ("const", r"^const\.[^/]+\.html$"),
            ("property", r"^property\.[^/]+\.html$"),
            ("callback", r"^callback\.[^/]+\.html$"),
            ("alias", r"^alias\.[^/]+\.html$"),
            ("index", r"^index\.html$"),
            ("docs", r"^(pango_[a-z]+|classes_hierarchy)\.html$"),
        ],
        # the five callable templates (method, constructor, type function, virtual function, function)
        # lay out the same blocks: score them once more as one class
        coarse={"method": "callable", "ctor": "callable", "type_func": "callable", "vfunc": "callable",
                "func": "callable"}),
    "gio": dict(
        package="libglib2.0-doc", version="2.74.6-2+deb12u9", generator="gtk-doc 1.33 (DocBook XSL)",
        root="libglib2.0-doc/usr/share/gtk-doc/html/gio", entry="index.html", extra=True,
        # GIO's book (its links to the GLib and GObject books are dead here); DocBook XSL renders each element
        # kind with its own template, named by the class of the page's top <div>; a command's
        # manual page is a refentry with a command synopsis instead of an API synopsis
        classes=[],
        markers=[
            ("book", rb'<div [^>]*class="book">'),
            ("part", rb'<div [^>]*class="(part|reference|preface)">'),
            ("chapter", rb'<div [^>]*class="chapter">'),
            ("glossary", rb'<div [^>]*class="glossary">'),
            ("index", rb'<div [^>]*class="index">'),
            ("command", rb'<div [^>]*class="refentry">[\s\S]*class="cmdsynopsis"'),
            ("refentry", rb'<div [^>]*class="refentry">'),
            ("section", rb'<div [^>]*class="(sect1|section)">'),
        ]),
    "postgresql": dict(
        package="postgresql-doc-15", version="15.20-0+deb12u1", generator="DocBook XSL (PostgreSQL's own build)",
        root="postgresql-doc-15/usr/share/doc/postgresql-doc-15/html", entry="index.html", extra=True,
        # a large DocBook book in one directory, every file name a word of its title: DocBook XSL renders each
        # division kind with its own template, named by the class of the <div> after the navigation header
        classes=[],
        markers=[
            ("book", rb'<hr /></div><div class="book"'),
            ("part", rb'<hr /></div><div class="(part|reference)"'),
            ("chapter", rb'<hr /></div><div class="(chapter|preface)"'),
            ("appendix", rb'<hr /></div><div class="appendix"'),
            ("refentry", rb'<hr /></div><div class="refentry"'),
            ("sect1", rb'<hr /></div><div class="sect1"'),
            ("index", rb'<hr /></div><div class="(index|bibliography)"'),
        ]),
    "python": dict(
        package="python3.11-doc", version="3.11.2-6+deb12u9", generator="Sphinx 5.3",
        root="python3.11-doc/usr/share/doc/python3.11/html", entry="index.html", extra=True,
        # Sphinx fills one page template for every document; the parts of the manual are what a
        # reader calls its page types, the generated indices have templates of their own
        classes=[
            ("genindex", r"^genindex(-[^/]+)?\.html$"),
            ("modindex", r"^py-modindex\.html$"),
            ("c_api", r"^c-api/"),
            ("library", r"^library/"),
            ("reference", r"^reference/"),
            ("tutorial", r"^tutorial/"),
            ("howto", r"^howto/"),
            ("whatsnew", r"^whatsnew/"),
            ("faq", r"^faq/"),
            ("setup", r"^(using|install|installing|distributing|distutils|extending)/"),
            ("toplevel_misc", r"^[^/]+\.html$"),
        ]),
    "commons-lang3": dict(
        package="libcommons-lang3-java-doc", version="3.12.0-2+deb12u1", generator="Javadoc (JDK 17, no frames)",
        root="libcommons-lang3-java-doc/usr/share/doc/libcommons-lang3-java/api", entry="index.html", extra=True,
        # the other Javadoc: HTML5 pages, no frames, a search box, and every class's source as a
        # page of its own (src-html/, no links: the dead ends); 93 of the 223 class-use pages
        # say only "No usage of …" (on a line of its own)
        stubs=("class_use", "class_use_stub", b"\nNo usage of "),
        classes=[
            ("source", r"^src-html/"),
            ("class_use", r"/class-use/[^/]+\.html$"),
            ("package_summary", r"(^|/)package-summary\.html$"),
            ("package_tree", r"(^|/)package-tree\.html$"),
            ("package_use", r"(^|/)package-use\.html$"),
            ("index_all", r"^index-all\.html$"),
            ("toplevel_misc", _JAVADOC_TOP),
            ("class", r"^org/.+/[^/]+\.html$"),
        ]),
    "js-of-ocaml": dict(
        package="libjs-of-ocaml-doc", version="4.0.0-2", generator="odoc 2 (OCaml)",
        root="libjs-of-ocaml-doc/usr/share/doc/libjs-of-ocaml-doc/api", entry="index.html", extra=True,
        # odoc writes one directory per documented item, its kind as the directory's prefix
        # (module-type-S/, class-type-t/, argument-1-X/; a module is its bare name), every page
        # index.html; a package's index lists its libraries' modules.  114 of the 335 module pages
        # are dune's wrapped internal modules, a title and nothing else, linked from no page
        stubs=("module", "module_stub", b'<div class="odoc-content"></div>'),
        classes=[
            ("class_type", r"(^|/)class-type-[^/]+/index\.html$"),
            ("class", r"(^|/)class-[^/]+/index\.html$"),
            ("module_type", r"(^|/)module-type-[^/]+/index\.html$"),
            ("argument", r"(^|/)argument-[^/]+/index\.html$"),
            ("package", r"^([^/]+/)?index\.html$"),
            ("module", r"/index\.html$"),
        ]),
    "crystal": dict(
        package="crystal-doc", version="1.6.0+dfsg-3", generator="crystal docs (Crystal 1.6)",
        root="crystal-doc/usr/share/doc/crystal/api-docs", entry="index.html", extra=True,
        # one page per type, every page with the whole type tree in its sidebar (~950 links); the
        # generator renders every kind with one template (type.html), the kind named in the page's
        # heading and its blocks optional (superclasses, constructors, enum members, alias
        # definition): scored once more as one type, as the visible corpora's truth scores
        # Javadoc's classes, interfaces and enums, Doxygen's classes, structs and unions
        coarse={kind: "type" for kind in ("class", "struct", "module", "enum", "alias", "annotation")},
        classes=[],
        markers=[
            ("class", rb'<span class="kind">(abstract )?class</span>'),
            ("struct", rb'<span class="kind">(abstract )?struct</span>'),
            ("module", rb'<span class="kind">module</span>'),
            ("enum", rb'<span class="kind">enum</span>'),
            ("alias", rb'<span class="kind">alias</span>'),
            ("annotation", rb'<span class="kind">annotation</span>'),
            ("index", rb'<div class="main-content">'),
        ]),
    "sqlite": dict(
        package="sqlite3-doc", version="3.40.1-2+deb12u2", generator="SQLite's own Tcl scripts (www.sqlite.org)",
        root="sqlite3-doc/usr/share/doc/sqlite3", entry="index.html", extra=True,
        # a hand-written generator: one header for every page, the C API one page per object or function
        # (the session extension's too) with three generated lists, a page per release, a page per
        # syntax diagram, and the prose documents at the top
        classes=[
            ("release_log", r"^releaselog/"),
            ("syntax_diagram", r"^syntax/"),
            ("api_list", r"^(c3ref|session)/(intro|funclist|objlist|constlist)\.html$"),
            ("api", r"^(c3ref|session)/"),
            ("document", r"^[^/]+\.html$"),
        ]),
    "git": dict(
        package="git-doc", version="1:2.39.5-0+deb12u3", generator="AsciiDoc 10.2 (xhtml11 backend)",
        root="git-doc/usr/share/doc/git-doc", entry="index.html", extra=True,
        # AsciiDoc renders a document with the template of its doctype, named in the body's class:
        # a manual page per command and concept, an article per guide, how-to and technical note;
        # the user manual is DocBook's, one page
        classes=[],
        markers=[
            ("manpage", rb'<body class="manpage"'),
            ("article", rb'<body class="article"'),
            ("book", rb'<meta name="generator" content="DocBook'),
        ]),
    "nodejs": dict(
        package="nodejs-doc", version="18.20.4+dfsg-1~deb12u3", generator="Node.js's doc tool (Markdown, remark)",
        root="nodejs-doc/usr/share/doc/nodejs/api", entry="index.html", extra=True,
        # one page per module, its Markdown rendered into one template; the whole API on one page
        classes=[
            ("index", r"^index\.html$"),
            ("all", r"^all\.html$"),
            ("module", r"^[^/]+\.html$"),
        ]),
    "scala": dict(
        package="scala-doc", version="2.11.12-5", generator="Scaladoc 2.11",
        root="scala-doc/usr/share/doc/scala-2.11/api/library", entry="index.html", extra=True,
        # one page per class, trait and object (an object's file ends in $), one per package, the
        # members' index one page per initial letter; the generator names two entity templates in
        # the body's class, "type" (classes, traits) and "value" (objects, packages): scored once
        # more by those
        coarse={"class": "type", "object": "value", "package": "value"},
        classes=[
            ("index", r"^index\.html$"),
            ("deprecated", r"^deprecated-list\.html$"),
            ("member_index", r"^index/index-[^/]+\.html$"),
            ("package", r"(^|/)package\.html$"),
            ("object", r"\$\.html$"),
            ("class", r"\.html$"),
        ]),
    "yard": dict(
        package="yard-doc", version="0.9.28-2+deb12u2", generator="YARD 0.9 (Ruby)",
        root="yard-doc/usr/share/doc/yard/doc", entry="index.html", extra=True,
        # YARD's own API: one page per class, exception and module (the kind in the page's <h1>; the
        # class template is the module template plus an inheritance block: scored once more as one
        # "namespace" type), one per extra file (file.*.html; index.html is the README's), the class,
        # method, file and tag lists of its frames view, an alphabetic index
        coarse={"exception": "namespace", "class": "namespace", "module": "namespace"},
        classes=[
            ("list", r"^(class|method|file|tag)_list\.html$"),
            ("index", r"^_index\.html$"),
            ("frames", r"^frames\.html$"),
            ("file", r"^(file\.[^/]+|index)\.html$"),
        ],
        markers=[
            ("exception", rb"<h1>Exception: "),
            ("class", rb"<h1>Class: "),
            ("module", rb"<h1>(Module: |Top Level Namespace)"),
        ]),
    "octave": dict(
        package="octave-doc", version="7.3.0-2", generator="GNU Texinfo 6.8 (makeinfo)",
        root="octave-doc/usr/share/doc/octave/octave.html", entry="index.html", extra=True,
        # makeinfo writes a page per node, its sectioning command as the class of the body's first
        # <div>; a node printing an index has the index's table.  An @anchor's file redirects to its
        # node and no link leads there: a file, not a page of the site
        redirects=b"<!-- This file redirects to",
        classes=[],
        markers=[
            ("index", rb'<table class="index-'),
            ("top", rb'<h1 class="settitle"'),
            ("chapter", rb'<body lang="[^"]*">\s*<div class="(chapter|appendix|unnumbered)"'),
            ("section", rb'<body lang="[^"]*">\s*<div class="(section|appendixsec|unnumberedsec)"'),
            ("subsection", rb'<body lang="[^"]*">\s*<div class="(subsection|appendixsubsec|unnumberedsubsec)"'),
            ("subsubsection", rb'<body lang="[^"]*">\s*<div class="(subsubsection|appendixsubsubsec)"'),
        ],
        # one template for every node, the level aside: scored once more as nodes, tops and indices
        coarse={"chapter": "node", "section": "node", "subsection": "node", "subsubsection": "node"}),
}


# rustdoc, a generator none of the model's rules was developed on: the standard library's API docs
# of the local Rust toolchain (`rustup component add rust-docs`), served from the crate's directory.
# Not a Debian package: present on a machine with the toolchain's docs, else left out of CORPORA.
RUSTDOC_HTML = os.environ.get("RUSTDOC_HTML") or os.path.join(
    os.path.expanduser("~"), ".rustup", "toolchains", "stable-x86_64-unknown-linux-gnu", "share", "doc", "rust", "html")
#: rustdoc writes one page per item, its kind as the file-name prefix (print_item renders each kind
#: with its own function); a module is its directory's index.html
_RUSTDOC_KINDS = "struct enum union trait traitalias fn type constant static macro attr derive primitive keyword"
_RUSTDOC_CLASSES = ([(k, rf"(^|/){k}\.[^/]+\.html$") for k in _RUSTDOC_KINDS.split()]
                    + [("module", r"(^|/)index\.html$"), ("all_items", r"^all\.html$")])
for _crate in ("std", "alloc"):
    if os.path.isfile(os.path.join(RUSTDOC_HTML, _crate, "index.html")):
        CORPORA[f"rust-{_crate}"] = dict(package=None, version=None, generator="rustdoc (local toolchain docs)",
                                        root=os.path.join(RUSTDOC_HTML, _crate), entry="index.html",
                                        classes=_RUSTDOC_CLASSES, extra=True,
                                        # old item paths kept as redirects (a meta refresh, no link leads
                                        # there): files, not pages of the site, left out of the truth
                                        redirects=b'<meta http-equiv="refresh"')


def _shared_truth() -> dict:
    """The development corpora's ground truth (``truth.py`` beside ``make_corpora.sh``), when present:
    ``$STRUCTCRAWL_TRUTH`` or ``../shared/corpora/truth.py`` from the project root."""
    path = os.environ.get("STRUCTCRAWL_TRUTH") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared", "corpora", "truth.py")
    if not os.path.isfile(path):
        return {}
    import importlib.util
    spec = importlib.util.spec_from_file_location("structcrawl_corpora_truth", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CORPORA


for _name, _spec in _shared_truth().items():
    if _name not in CORPORA:
        CORPORA[_name] = dict(package=_spec["package"], version=_spec["version"], generator=_spec["generator"],
                              root=_spec["root"], entry=_spec["entry"], classes=list(_spec["classes"]))

_COMPILED: dict[str, list[tuple[str, re.Pattern]]] = {}


def defaults() -> list[str]:
    """The corpora a benchmark runs when none is named: every one but the ``extra`` ones, sorted."""
    return sorted(c for c, spec in CORPORA.items() if not spec.get("extra"))


def label(corpus: str, relpath: str) -> str | None:
    """Truth class of a page path relative to the corpus root, or None (not in the truth)."""
    rules = _COMPILED.get(corpus)
    if rules is None:
        rules = _COMPILED[corpus] = [(n, re.compile(rx)) for n, rx in CORPORA[corpus]["classes"]]
    p = relpath.lstrip("/")
    if CORPORA[corpus].get("redirects") and _redirect(corpus, p):
        return None
    for name, rx in rules:
        if rx.search(p):
            return name
    return _marked(corpus, p) if CORPORA[corpus].get("markers") else None


@functools.lru_cache(maxsize=None)
def _marked(corpus: str, relpath: str) -> str | None:
    """The first of the corpus's ``markers`` the file holds (read once)."""
    try:
        with open(os.path.join(root_dir(corpus), relpath), "rb") as fh:
            body = fh.read()
    except OSError:  # not a file of the site (a dead link's URL)
        return None
    return next((name for name, rx in CORPORA[corpus]["markers"] if re.search(rx, body)), None)


@functools.lru_cache(maxsize=None)
def _redirect(corpus: str, relpath: str) -> bool:
    """The file starts with the corpus's ``redirects`` marker (read once: the learning curve
    labels every page at every model step)."""
    try:
        with open(os.path.join(root_dir(corpus), relpath), "rb") as fh:
            return CORPORA[corpus]["redirects"] in fh.read(512)
    except OSError:  # not a file of the site (a dead link's URL)
        return False


def stub_truth(corpus: str, truth: dict[str, str]) -> dict[str, str] | None:
    """``truth`` with the corpus's stub pages (``stubs``: truth class, stub class, marker
    bytes in the file) relabelled as their own class; None when the corpus has none."""
    spec = CORPORA[corpus].get("stubs")
    if not spec:
        return None
    cls, stub, marker = spec
    root = root_dir(corpus)
    out = dict(truth)
    for p, c in truth.items():
        if c == cls:
            with open(os.path.join(root, p), "rb") as fh:
                if marker in fh.read():
                    out[p] = stub
    return out


def root_dir(corpus: str) -> str:
    return os.path.join(BASE, CORPORA[corpus]["root"])


def html_pages(corpus: str) -> list[str]:
    """The site's pages: every .html/.htm file under the root (relative, '/'-separated, sorted) but
    the corpus's ``redirects`` (files no link leads to: counted, they would make a crawl's share of
    the site look smaller — a tenth of rust-std's files, four fifths of octave's)."""
    root = root_dir(corpus)
    out = []
    for dp, _dn, fn in os.walk(root):
        for f in fn:
            if f.lower().endswith((".html", ".htm")):
                full = os.path.join(dp, f)
                if os.path.isfile(full):
                    out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    if CORPORA[corpus].get("redirects"):
        out = [p for p in out if not _redirect(corpus, p)]
    return sorted(out)


def ensure(corpus: str, log=print) -> str:
    """The corpus root, after ``apt-get download`` + ``dpkg -x`` if it is not extracted yet."""
    c = CORPORA[corpus]
    pkg = c["package"]
    root = root_dir(corpus)
    if pkg is None:  # a local corpus (rustdoc): registered only when present
        return root
    stamp = os.path.join(BASE, pkg, ".extracted")
    if os.path.isdir(root) and (os.path.exists(stamp) or html_pages(corpus)):
        return root
    debs = os.path.join(BASE, "debs")
    os.makedirs(debs, exist_ok=True)
    found = sorted(glob.glob(os.path.join(debs, f"{pkg}_*.deb")))
    if not found:
        log(f"== apt-get download {pkg}")
        try:
            subprocess.run(["apt-get", "download", pkg], cwd=debs, check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(f"cannot download {pkg} ({exc}); run 'apt-get update' first?") from None
        found = sorted(glob.glob(os.path.join(debs, f"{pkg}_*.deb")))
    deb = found[0]
    version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True, text=True).stdout.strip()
    if version != c["version"]:
        log(f"WARNING: {pkg}: version {version}, ground truth checked on {c['version']}")
    dest = os.path.join(BASE, pkg)
    log(f"== dpkg -x {os.path.basename(deb)} {dest}")
    os.makedirs(dest, exist_ok=True)
    subprocess.run(["dpkg", "-x", deb, dest], check=True)
    with open(stamp, "w") as fh:
        fh.write(version + "\n")
    return root
