"""The harvest scaled out on scrapy-redis: several worker processes on one Redis queue, state and items in PostgreSQL.

Real services: Redis at 127.0.0.1:6379 (``scripts/test`` starts it) and PostgreSQL (``dbfixtures``: a schema
per test, dropped afterwards); each test's harvest job has a name of its own, so its Redis keys
(``structcrawl:<job>:…``) collide with nobody's, and they are deleted afterwards.  The Redis-restart test runs
a private ``redis-server`` (append-only file, fsync on every write) on a free port, so that restarting it
disturbs no other test.  The site is the demo bookshop at 900 pages (seed 3, ~450 books), not the 30k site of
``benchmarks/distributed_harvest.py``: three workers, two kill -9 and a restart stay within a minute or two
on a shared 2-core machine.
"""

from __future__ import annotations

import json
import pickle
import random
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
import sqlalchemy as sa
from scrapy import Request, Spider
from scrapy.utils.request import request_from_dict

import helpers
from dbfixtures import pg_url  # noqa: F401 - fixture
from helpers import QUIET, SCRAPY, assert_one_error
from structcrawl.analysis.harvestplan import Entry, Harvest
from structcrawl.crawling import redisjson
from structcrawl.settings import (
    CONCURRENT_REQUESTS_PER_DOMAIN,
    STRUCTCRAWL_HARVEST_EXPLORE,
    STRUCTCRAWL_HARVEST_EXPLORE_MIN,
)
from test_harvest import class_of, demo, model, truth  # noqa: F401 - fixtures: the 900-page demo, its model

DEADLINE = 240.0
REDIS = "redis://127.0.0.1:6379/0"
#: A short heartbeat life: a killed worker's requests go back to the queue within seconds.
FAST = ["-s", "STRUCTCRAWL_WORKER_TTL=2"]


@pytest.fixture
def job():
    """A harvest job name of this test alone; its Redis keys are deleted afterwards."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    yield name
    server = redis.Redis.from_url(REDIS)
    keys = list(server.scan_iter(f"structcrawl:{name}:*"))
    if keys:
        server.delete(*keys)
    server.close()


def worker_cmd(model: Path, books: int, job: str, db: str, redis_url: str = REDIS, *extra: str) -> list[str]:
    return [SCRAPY, "crawl", "harvest", "-a", f"model={model}", "-a", f"classes={books}", "-a", f"job={job}",
            "-s", f"STRUCTCRAWL_DB={db}", "-s", f"REDIS_URL={redis_url}", *QUIET, *FAST, *extra]


def stored(db: str, job: str, pid: int | None = None) -> list[str]:
    """The URLs of the job's items in PostgreSQL, one per row (those stored by the worker of process ``pid``)."""
    engine = sa.create_engine(db)
    worker = "%" if pid is None else f"%-{pid}-%"
    try:
        with engine.connect() as conn:
            return list(conn.execute(sa.text(
                "SELECT i.url FROM sc_harvest_items i JOIN sc_jobs j ON j.id = i.job_id "
                "WHERE j.name = :job AND i.worker LIKE :worker"), {"job": job, "worker": worker}).scalars())
    except sa.exc.ProgrammingError:  # no table yet: the first worker is starting
        return []
    finally:
        engine.dispose()


class Workers(list):
    """Worker processes, each logging to a file of ``directory``; killed on the way out if still running."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self.logs: list = []

    def start(self, cmd: list[str]) -> subprocess.Popen:
        self.logs.append(open(self.directory / f"worker{len(self)}.log", "w"))
        self.append(subprocess.Popen(cmd, cwd=helpers.PROJECT, stdout=self.logs[-1], stderr=subprocess.STDOUT))
        return self[-1]

    def output(self, *which: int) -> str:
        return "".join((self.directory / f"worker{i}.log").read_text() for i in (which or range(len(self))))

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc) -> None:
        for w in self:
            if w.poll() is None:
                w.kill()
                w.wait()
        for fh in self.logs:
            fh.close()


def jobs_json(db: str) -> dict[str, dict]:
    res = helpers.structcrawl("jobs", "--db", db, "--json")
    assert res.returncode == 0, res.stderr[-2000:]
    return {r["job"]: r for r in map(json.loads, res.stdout.splitlines())}


def wait_for(condition, what: str, timeout: float = DEADLINE, workers: Workers | None = None) -> None:
    """Poll ``condition`` until it holds; fail at ``timeout``, or at once when every one of ``workers``
    has exited, with the tail of their logs (a stalled harvest is then diagnosable from CI's output)."""
    end = time.monotonic() + timeout
    while not condition():
        gone = workers is not None and all(w.poll() is not None for w in workers)
        if gone or time.monotonic() >= end:
            detail = "".join(f"\n--- worker {i} (exit {w.poll()}) ---\n{workers.output(i)[-1500:]}"
                             for i, w in enumerate(workers)) if workers is not None else ""
            raise AssertionError(f"{'every worker exited' if gone else 'timed out'} waiting for {what}{detail}")
        time.sleep(0.1)


def test_json_serializer_round_trip_runs_no_code():
    class Owner(Spider):
        name = "owner"

        def parse_page(self, response):
            return []

    spider = Owner()
    entry = Entry("http://a.test/book/1.html", (3, "html/body/ul/li/a"), "http://a.test/", True)
    request = Request(entry.url, callback=spider.parse_page, headers={"Referer": "http://a.test/"},
                      meta={"structcrawl_harvest": entry, "redirect_urls": ["http://a.test/b/1"]}, priority=-2)
    data = redisjson.dumps(request.to_dict(spider=spider))
    back = request_from_dict(redisjson.loads(data), spider=spider)
    assert back.meta["structcrawl_harvest"] == entry
    assert back.headers[b"Referer"] == b"http://a.test/" and back.priority == -2
    assert back.callback == spider.parse_page
    # a pickle in the queue is refused, not loaded
    with pytest.raises(ValueError):
        redisjson.loads(pickle.dumps({"url": "x"}))
    # the queue names the callbacks without Request.to_dict's search of the spider, to the same JSON
    from structcrawl.crawling.leasequeue import LeasedPriorityQueue

    server = redis.Redis.from_url(REDIS)
    queue = LeasedPriorityQueue(server, spider, "unused", serializer=redisjson)
    assert queue._encode_request(request) == data
    other = request.replace(callback=lambda response: [])  # not a method of the spider: to_dict's error
    with pytest.raises(ValueError):
        queue._encode_request(other)
    server.close()


class ReplyCutter:
    """A TCP relay to the Redis at 127.0.0.1:6379 that, once :meth:`cut_next` is called, lets the next
    command through and drops the connection instead of relaying its reply: what a worker sees when
    Redis is killed after running a command (and writing it to its append-only file) but before
    answering."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        self.armed = threading.Event()
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_next(self) -> None:
        self.armed.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _addr = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", 6379))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, replies: bool) -> None:
        try:
            while data := src.recv(65536):
                if replies and self.armed.is_set():
                    self.armed.clear()
                    self.cuts += 1
                    break
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            sock.close()

    def close(self) -> None:
        self.listener.close()


class QueueOwner(Spider):
    """The spider a shared queue belongs to: its name, the job, the callback its requests name."""

    name = "harvest"

    def parse_page(self, response):
        return []


def queue_owner(job: str) -> QueueOwner:
    spider = QueueOwner()
    spider.job_name = job
    return spider


def test_a_pop_whose_reply_was_lost_leases_one_request(job):
    """The client retries a command whose connection broke (a Redis restarting): a pop that ran but whose
    reply never arrived, sent again, returns the request it leased; it does not lease a second one that
    no worker would fetch."""
    from scrapy.settings import Settings

    from structcrawl.crawling.distributed import open_queue
    from structcrawl.settings import STRUCTCRAWL_REDIS_SCHEDULER

    spider = queue_owner(job)
    relay = ReplyCutter()
    try:
        settings = Settings({**STRUCTCRAWL_REDIS_SCHEDULER, "REDIS_URL": relay.url, "STRUCTCRAWL_REDIS_WAIT": 5})
        queue, dupefilter = open_queue(settings, spider)
        queue.worker = "w1"
        queue.join(60)
        assert queue.pop() is None  # the script is loaded: the cut reply below is the pop's
        for n in (1, 2):
            request = Request(f"http://a.test/book/{n}.html", callback=spider.parse_page, priority=-n)
            assert queue.push_unseen(request, dupefilter.request_fingerprint(request), dupefilter.key)
        relay.cut_next()
        first = queue.pop()
        assert relay.cuts == 1
        assert first is not None and first.url == "http://a.test/book/1.html"
        assert queue.backlog() == (1, 1)  # book 2 still queued; one lease, book 1's
        queue.ack(first)
        second = queue.pop()
        assert second is not None and second.url == "http://a.test/book/2.html"
        assert queue.backlog() == (0, 1)
        queue.server.close()
    finally:
        relay.close()


def test_a_worker_taken_for_dead_counts_the_requests_it_takes_after(job):
    """A worker whose heartbeat lapsed while it was still running (a stall longer than its time to live, on a
    loaded machine) is taken for dead: another worker re-queues its leases and drops it from the workers set.
    A request it pops before its next heartbeat is its lease at once: counted in the backlog (another worker
    does not find the job done while it is in flight) and re-queued if it dies before that heartbeat (a lease
    outside the workers set was never reclaimed: the page was lost)."""
    from scrapy.settings import Settings

    from structcrawl.crawling.distributed import open_queue
    from structcrawl.settings import STRUCTCRAWL_REDIS_SCHEDULER

    spider = queue_owner(job)
    settings = Settings({**STRUCTCRAWL_REDIS_SCHEDULER, "REDIS_URL": REDIS})
    a, dupefilter = open_queue(settings, spider)
    b, _ = open_queue(settings, spider)
    a.worker, b.worker = "a", "b"
    a.join(60)
    b.join(60)
    for n in (1, 2):
        request = Request(f"http://a.test/book/{n}.html", callback=spider.parse_page, priority=-n)
        assert a.push_unseen(request, dupefilter.request_fingerprint(request), dupefilter.key)
    a.server.delete(a.alive_key("a"))  # a's heartbeat key expired: a stalled, it did not stop
    assert b.reclaim() == 0 and not b.server.sismember(b.workers_key, "a")
    taken = a.pop()  # a goes on before its next heartbeat
    assert taken is not None and taken.url == "http://a.test/book/1.html"
    assert b.backlog() == (1, 1)  # a's lease is counted
    assert b.reclaim() == 1  # a is killed before its heartbeat: its lease is handed out again
    assert b.backlog() == (2, 0)
    assert {b.pop().url, b.pop().url} == {"http://a.test/book/1.html", "http://a.test/book/2.html"}
    a.server.close()
    b.server.close()


def test_plan_reports_reach_the_other_workers_once(job):
    """What one worker made of a page reaches every other worker's plan once, in order; its own never comes
    back, and a report sent twice (a pipeline resent after a lost reply) is read once."""
    from structcrawl.crawling.sharedplan import PlanStream

    server = redis.Redis.from_url(REDIS)
    key = f"structcrawl:{job}:requests:plan"
    a, b = PlanStream(server, key, "a"), PlanStream(server, key, "b")
    book = (6, "html/body/ul/li/a")
    a.page("http://a.test/book/1.html", book, 6, [("http://a.test/author/1", (6, "p/a"))], False,
           "http://a.test/b/1", ["http://a.test/author/1"])
    a.failed(Entry("http://a.test/book/2.html", book, "http://a.test/", True), False, [])
    resent = list(a.outbox)
    assert a.exchange() == []
    a.outbox = resent
    a.exchange()
    assert server.xlen(key) == 4
    page, failure = b.exchange()
    assert (page.url, page.key, page.cls, page.requested) == ("http://a.test/book/1.html", book, 6,
                                                              "http://a.test/b/1")
    assert page.collections == {"p/a": ["http://a.test/author/1"]} and page.queued == ["http://a.test/author/1"]
    assert failure.failed and failure.entry() == Entry("http://a.test/book/2.html", book, "http://a.test/", True)
    assert b.exchange() == []
    server.close()


def test_a_recheck_round_is_the_jobs_and_read_once(job):
    """Two workers that find the job's plan dry at once both send re-check round 1: a third reads it once,
    and a later round again; a URL a worker took back from the queue (a dead collection's) reaches every
    plan."""
    from structcrawl.crawling.sharedplan import PlanStream, Recheck

    server = redis.Redis.from_url(REDIS)
    key = f"structcrawl:{job}:requests:plan"
    a, b, c = (PlanStream(server, key, w) for w in "abc")
    reviews = (6, "section.reviews/a")
    a.recheck()
    b.recheck()
    a.exchange()
    b.exchange()  # reads a's round 1: one b sent already
    assert (a.rechecks, b.rechecks) == (1, 1)
    assert c.exchange() == [Recheck(1)]
    b.hold(Entry("http://a.test/review/3", reviews, "http://a.test/book/1.html", False))
    b.recheck()
    b.send()  # no read
    held, second = c.exchange()
    assert held.held and held.entry() == Entry("http://a.test/review/3", reviews, "http://a.test/book/1.html", False)
    assert second == Recheck(2) and a.exchange()[-1] == Recheck(2)
    server.close()


def _one_process_and_three_workers(demo, model, pg_url, job):
    """Pages one harvest process fetches for the books, then three shared workers' run of the same."""
    books = class_of(model, "/book/")
    mark = demo.log.mark()
    one = helpers.run([SCRAPY, "crawl", "harvest", "-a", f"model={model}", "-a", f"classes={books}", *QUIET],
                      timeout=DEADLINE)
    assert one.returncode == 0, one.stderr[-3000:]
    alone = demo.log.gets(mark)
    mark = demo.log.mark()
    # as many pages in flight as the one process (8 a domain): pages fetched in flight before a page shows
    # that they are not needed (a dead collection, a redirecting URL shape) are not the plan's doing, and
    # three workers at 8 each have three times as many (up to 45 pages more than one process, measured)
    per_worker = -(-CONCURRENT_REQUESTS_PER_DOMAIN // 3)
    res = helpers.structcrawl("harvest", str(model), "--classes", str(books), "--db", pg_url, "--redis", REDIS,
                              "--workers", "3", "--job", job, *QUIET, *FAST,
                              "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={per_worker}", timeout=DEADLINE)
    assert res.returncode == 0, res.stderr[-3000:]
    return alone, demo.log.gets(mark)


def test_three_workers_record_every_target_once(demo, model, pg_url, job, tmp_path):  # noqa: F811
    """``structcrawl harvest --redis --workers 3``: every book in PostgreSQL once, no page fetched twice."""
    _alone, together = _one_process_and_three_workers(demo, model, pg_url, job)
    urls = stored(pg_url, job)
    assert sorted(urls) == sorted(truth(demo, "book"))  # every book, each once
    assert len(together) == len(set(together))  # no page fetched twice
    record = jobs_json(pg_url)[job]
    assert record["status"] == "finished"
    assert len(record["workers"]) == 3
    assert sum(w["items"] for w in record["workers"]) == len(urls)


@pytest.mark.xfail(strict=False, reason=(
    "known miss, issue 15: three shared workers fetch 13-63 pages more than one process (measured over 14 runs "
    "on 2026-11-27, with and without the harvest's seventh pass and the nested-skeleton rule), against one "
    "exploration budget (40): the bound fails in about half the runs; every book is still stored once"))
def test_three_workers_fetch_what_one_process_fetches(demo, model, pg_url, job, tmp_path):  # noqa: F811
    """The workers' plans are fed every worker's pages: together they fetch what one process fetches, give
    or take one exploration budget (the job's, not each worker's)."""
    alone, together = _one_process_and_three_workers(demo, model, pg_url, job)
    budget = STRUCTCRAWL_HARVEST_EXPLORE_MIN + STRUCTCRAWL_HARVEST_EXPLORE * len(alone)
    print(f"one process fetched {len(alone)} pages, three workers {len(together)}, budget {budget:.0f}")
    assert abs(len(together) - len(alone)) <= budget, (len(together), len(alone), budget)


def test_kill9_twice_loses_nothing_and_a_restarted_worker_joins(demo, model, pg_url, job, tmp_path):  # noqa: F811
    """Three workers; at a random moment one that has stored items is killed (-9) and a worker started again,
    then at another moment another of the first ones; the others finish every book, each stored once.
    Items reach PostgreSQL behind the pages: on a fast machine the first workers may all have finished when
    the second moment's share is stored, and the second kill is then left out (seen in CI)."""
    books = class_of(model, "/book/")
    wanted = truth(demo, "book")
    cmd = worker_cmd(model, books, job, pg_url)
    rng = random.Random()
    killed = 0
    with Workers(tmp_path) as workers:
        first = [workers.start(cmd) for _ in range(3)]
        restarted = None
        for share in (rng.uniform(0.1, 0.3), rng.uniform(0.3, 0.5)):
            victims: list[subprocess.Popen] = []

            def ready(share=share, victims=victims):
                """Once the harvest is ``share`` done: the first workers still running that stored items
                (``victims``), or True with none when none of the first runs any more."""
                if len(stored(pg_url, job)) < share * len(wanted):
                    return False
                victims[:] = [w for w in first if w.poll() is None and stored(pg_url, job, w.pid)]
                return bool(victims) or all(w.poll() is not None for w in first)

            wait_for(ready, f"{share:.0%} of the books", workers=workers)
            if not victims:
                break
            victim = rng.choice(victims)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            first.remove(victim)
            killed += 1
            restarted = restarted or workers.start(cmd)  # joins while most of the harvest is left
        assert killed >= 1
        for w in (*first, restarted):
            assert w.wait(timeout=DEADLINE) == 0, workers.output()[-3000:]
    urls = stored(pg_url, job)
    assert len(urls) == len(set(urls))
    assert set(urls) == wanted, (len(wanted - set(urls)), len(set(urls) - wanted))
    record = jobs_json(pg_url)[job]
    assert record["status"] == "finished"
    statuses = sorted(w["status"] for w in record["workers"])
    assert statuses == ["finished"] * (4 - killed) + ["running"] * killed  # the killed never said goodbye
    assert not any(w["alive"] for w in record["workers"])  # their processes are gone
    joined = next(w for w in record["workers"] if w["pid"] == restarted.pid)
    assert joined["pages"] > 0 and joined["status"] == "finished"
    requeued = sum(int(m) for m in re.findall(r"Re-queued (\d+) requests of workers that stopped", workers.output()))
    assert requeued > 0  # the dead workers' requests were handed out again


@pytest.fixture
def private_redis(tmp_path):
    """A redis-server of this test (append-only, fsync always) on a free port: ``(url, restart)``."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server not found: the tests need a Redis server (Debian package redis-server)"
    port = helpers.unused_port()
    data = tmp_path / "redis"
    data.mkdir()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data), "--appendonly", "yes",
            "--appendfsync", "always", "--save", ""]
    procs = []

    def start():
        procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        client = redis.Redis(port=port)
        wait_for(lambda: _pings(client), "the private redis-server", timeout=30)

    def restart(down: float) -> None:
        procs[-1].send_signal(signal.SIGKILL)  # nothing is saved on the way out: the append-only file only
        procs[-1].wait()
        time.sleep(down)  # the outage the workers live through
        start()

    start()
    yield f"redis://127.0.0.1:{port}/0", restart
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def test_redis_restarted_mid_harvest_workers_wait_and_go_on(demo, model, pg_url, job, private_redis,  # noqa: F811
                                                           tmp_path):
    url, restart = private_redis
    books = class_of(model, "/book/")
    wanted = truth(demo, "book")
    cmd = worker_cmd(model, books, job, pg_url, url)
    with Workers(tmp_path) as workers:
        for _ in range(2):
            workers.start(cmd)
        wait_for(lambda: len(stored(pg_url, job)) >= 0.3 * len(wanted), "30 % of the books", workers=workers)
        assert all(w.poll() is None for w in workers)  # the outage comes mid-harvest
        restart(1.5)
        before = len(stored(pg_url, job))
        codes = [w.wait(timeout=DEADLINE) for w in workers]
    assert codes == [0, 0], workers.output()[-3000:]
    urls = stored(pg_url, job)
    assert len(urls) == len(set(urls))
    assert set(urls) == wanted, (len(wanted - set(urls)), len(set(urls) - wanted))
    assert before < len(wanted)  # the workers went on after the restart
    assert jobs_json(pg_url)[job]["status"] == "finished"


def test_a_worker_of_another_model_or_classes_is_refused(demo, model, pg_url, job, tmp_path):  # noqa: F811
    books = class_of(model, "/book/")
    res = helpers.structcrawl("harvest", str(model), "--classes", str(books), "--db", pg_url, "--redis", REDIS,
                              "--workers", "0", "--job", job, *QUIET)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith(f"seeded: harvest job {job} waits for workers")
    authors = class_of(model, "/author/")
    res = helpers.run(worker_cmd(model, authors, job, pg_url), timeout=DEADLINE)
    assert res.returncode != 0
    errors = [line for line in res.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1 and "a worker must use the job's model and classes" in errors[0], errors
    other = tmp_path / "other.model.json"
    doc = json.loads(model.read_text(encoding="utf-8"))
    doc["crawl"]["pages_requested"] = -1  # another model file: another digest
    other.write_text(json.dumps(doc), encoding="utf-8")
    res = helpers.structcrawl("harvest", str(other), "--classes", str(books), "--db", pg_url, "--redis", REDIS,
                              "--workers", "1", "--job", job, *QUIET)
    assert_one_error(res, "a worker must use the job's model and classes")
    # SQLite is the one-process store
    res = helpers.structcrawl("harvest", str(model), "--classes", str(books), "--db",
                              f"sqlite:///{tmp_path / 'one.db'}", "--redis", REDIS, "--job", job, *QUIET)
    assert_one_error(res, "keeps its state in PostgreSQL")
    res = helpers.structcrawl("harvest", str(model), "--classes", str(books), "--workers", "2", *QUIET)
    assert_one_error(res, "--workers needs --redis URL")


def test_docker_compose_harvesters_scale_on_one_queue(demo, model, pg_url, job, tmp_path):  # noqa: F811
    """docker-compose.yml's harvester service, run here twice at once (``--scale harvester=2``): its
    command against our demo server, PostgreSQL and Redis stores every book once."""
    import yaml

    services = yaml.safe_load((helpers.PROJECT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]
    harvester = services["harvester"]
    assert harvester["depends_on"]["redis"]["condition"] == "service_healthy"
    assert harvester["depends_on"]["crawler"]["condition"] == "service_completed_successfully"
    assert "--appendonly" in services["redis"]["command"]
    cmd = list(harvester["command"])
    assert cmd[:3] == ["scrapy", "crawl", "harvest"]
    assert "/book/1.html" in {path for path, _cls in demo.site.truth()}
    replace = {"model=/out/demo.model.json": f"model={model}", "like=http://demo:8000/": f"like={demo.url}",
               "job=demo-harvest": f"job={job}", "redis://redis:6379/0": REDIS}
    local = [SCRAPY]
    for arg in cmd[1:]:
        if arg.startswith("STRUCTCRAWL_DB="):
            assert "@postgres:5432/structcrawl" in arg
            arg = f"STRUCTCRAWL_DB={pg_url}"
        for old, new in replace.items():
            arg = arg.replace(old, new)
        local.append(arg)
    replicas = [subprocess.Popen(local + QUIET + FAST, cwd=helpers.PROJECT, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [r.communicate(timeout=DEADLINE)[1] for r in replicas]
    assert [r.returncode for r in replicas] == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    urls = stored(pg_url, job)
    assert len(urls) == len(set(urls)) and set(urls) == truth(demo, "book")


def test_request_priorities_order_the_shared_queue_as_one_process_pops():
    """``Harvest.priority`` sorts the URLs waiting as ``Harvest.pop`` hands them out: targets, then hubs nearer
    first and, within a distance, the class whose pages show more new URLs nearer first, then the listings
    linked from target pages.  Redis orders a shared queue by priority alone (ties by chance): with one level
    for every hub of a distance, three workers fetched the demo's author pages (linked from the category pages)
    level with the categories' next pages and up to 64 pages more than one process."""
    h = "http://shop.test"
    menu, pager, items, by, works, byline = "nav/a", "pager/a", "items/a", "by/a", "works/a", "p/a"
    # home 0 -> list 1 -> item 2 (the targets); a list page links the authors 4 of its items, an author its
    # items (fewer than a list page: the list goes first), an item its author (a listing of items)
    links = [(0, menu, 1, 3), (1, pager, 1, 10), (1, items, 2, 200), (1, by, 4, 40), (4, works, 2, 60),
             (2, byline, 4, 40)]
    sizes = {0: 1, 1: 5, 2: 40, 4: 20}
    patterns = {0: "^/$", 1: r"^/list/\d+$", 2: r"^/item/\d+$", 4: r"^/author/\d+$"}
    plan = Harvest({"classes": [{"id": c, "size": n, "url_pattern": patterns[c]} for c, n in sizes.items()],
                    "class_links": [{"source": s, "path": p, "target": t, "count": n} for s, p, t, n in links]},
                   [2], explore_share=0.0, explore_min=0)
    plan.seed(h + "/")
    priorities = {}

    def take() -> list[str]:
        urls = []
        while (entry := plan.pop()) is not None:
            priorities[entry.url] = plan.priority(entry)
            urls.append(entry.url)
        return urls

    take()
    plan.page(h + "/", None, 0, {menu: [h + "/list/1"]})
    take()
    plan.page(h + "/list/1", (0, menu), 1, {pager: [h + "/list/2"], items: [h + "/item/1"], by: [h + "/author/1"]})
    plan.page(h + "/item/1", (1, items), 2, {byline: [h + "/author/2"]})
    item = plan.buckets[2][0]  # queued by the list page, not taken yet: the listing's page was fed first
    assert plan.priority(item) == 0  # a target: taken also while hubs wait (min_priority), never parked
    popped = take()
    assert popped == [h + "/list/2", h + "/author/1", h + "/author/2"]  # the one-process order (item/1: fetched)
    assert sorted(popped, key=lambda u: -priorities[u]) == popped  # the shared queue's: the same
    assert len({priorities[u] for u in popped}) == 3  # no tie left to Redis
    assert all(priorities[u] < 0 for u in popped)  # hubs: parked while quiet, not taken while busy
