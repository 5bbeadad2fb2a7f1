"""``structcrawl evaluate`` end to end, through ``python -m structcrawl`` in a subprocess."""

from __future__ import annotations

import json
import subprocess
from functools import partial
from pathlib import Path

import pytest

from helpers import structcrawl

run = partial(structcrawl, "evaluate", timeout=60)


def write_jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


# Worked example of tests/test_metrics.py: A = p1..p6, B = p7..p10;
# clusters X = p1..p4, Y = p5..p7, Z = p8..p10.
# F* = 144/175, purity 0.9, entropy 0.2755 bits, ARI = 44/109, pair P = 5/6, R = 10/21.
BASE = "http://127.0.0.1:8765"


def worked_truth(tmp_path: Path, base: str = "") -> str:
    lines = ["url,class"] + [f"{base}/p{k},{'A' if k <= 6 else 'B'}" for k in range(1, 11)]
    path = tmp_path / "truth.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def worked_assignments(tmp_path: Path) -> str:
    cluster = {1: "X", 2: "X", 3: "X", 4: "X", 5: "Y", 6: "Y", 7: "Y", 8: "Z", 9: "Z", 10: "Z"}
    rows = [{"url": f"{BASE}/p{k}", "class": c, "input": "/html/body/a", "cost": 1.5} for k, c in cluster.items()]
    rows.append({"url": f"{BASE}/elsewhere", "class": "X"})  # not in truth: ignored
    return write_jsonl(tmp_path / "assign.jsonl", rows)


def test_table_output(tmp_path):
    res = run("--assignments", worked_assignments(tmp_path), "--truth", worked_truth(tmp_path, BASE))
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["measure", "value"]
    table = {line.rsplit(None, 1)[0].strip(): line.rsplit(None, 1)[1] for line in lines[2:]}
    assert table["F*"] == f"{144 / 175:.4f}"
    assert table["purity"] == "0.9000"
    assert table["entropy (bits)"] == "0.2755"
    assert table["adjusted Rand index"] == f"{44 / 109:.4f}"
    assert table["pairwise precision"] == f"{5 / 6:.4f}"
    assert table["pairwise recall"] == f"{10 / 21:.4f}"
    assert table["pages evaluated (truth)"] == "10"
    assert table["assigned pages not in truth"] == "1"


def test_json_output(tmp_path):
    res = run("--assignments", worked_assignments(tmp_path), "--truth", worked_truth(tmp_path, BASE), "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    for key in (
        "fstar", "entropy", "purity", "ari", "pair_precision", "pair_recall",
        "pages", "unassigned", "ignored", "clusters", "classes",
    ):  # fmt: skip
        assert key in out
    assert out["fstar"] == pytest.approx(144 / 175)
    assert out["ari"] == pytest.approx(44 / 109)
    assert (out["pages"], out["clusters"], out["classes"], out["unassigned"], out["ignored"]) == (10, 3, 2, 0, 1)


def test_relative_truth_matches_on_path_and_query(tmp_path):
    truth = tmp_path / "truth.csv"
    truth.write_text("url,class\n/a?id=1,item\n/a?id=2,item\n/list,listing\n/missing,listing\n", encoding="utf-8")
    assign = write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"url": "http://127.0.0.1:8000/a?id=1", "class": 0},
            {"url": "http://127.0.0.1:8000/a?id=2#reviews", "class": 0},
            {"url": "https://localhost/list", "class": 1},
            {"url": "http://127.0.0.1:8000/a?id=3", "class": 0},  # not in truth
        ],
    )
    res = run("--assignments", assign, "--truth", str(truth), "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    # /missing is unassigned → its own singleton; everything else is perfect
    assert (out["pages"], out["unassigned"], out["ignored"], out["clusters"]) == (4, 1, 1, 3)
    assert out["purity"] == 1.0
    # F_item = 1; F_listing = max over {/list}, {/missing}: 2·1/(2+1) = 2/3 → F* = (2·1 + 2·2/3)/4 = 5/6
    assert out["fstar"] == pytest.approx(5 / 6)


def test_null_class_and_stdin(tmp_path):
    rows = "\n".join(json.dumps(r) for r in [{"url": "/p1", "class": None}, {"url": "/p2", "class": "c"}]) + "\n\n"
    truth = tmp_path / "t.csv"
    truth.write_text("url,class\n/p1,A\n/p2,A\n", encoding="utf-8")
    res = run("--assignments", "-", "--truth", str(truth), "--json", stdin=rows)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["unassigned"] == 1 and out["clusters"] == 2 and out["pair_recall"] == 0.0


def assert_one_line_error(res: subprocess.CompletedProcess, *fragments: str) -> None:
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("structcrawl: error: ")
    assert "Traceback" not in res.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_missing_file(tmp_path):
    res = run("--assignments", str(tmp_path / "nope.jsonl"), "--truth", worked_truth(tmp_path))
    assert_one_line_error(res, "nope.jsonl")
    res = run("--assignments", worked_assignments(tmp_path), "--truth", str(tmp_path / "nope.csv"))
    assert_one_line_error(res, "nope.csv")


def test_malformed_json_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"url": "/p1", "class": "x"}\n{"url": "/p2", "class": \n', encoding="utf-8")
    assert_one_line_error(run("--assignments", str(path), "--truth", worked_truth(tmp_path)), "line 2")


def test_json_line_without_url(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"url": "/p1", "class": "x"}, {"class": "x"}, {"url": "/p3"}])
    assert_one_line_error(run("--assignments", path, "--truth", worked_truth(tmp_path)), "line 2", "url")


def test_csv_without_header(tmp_path):
    truth = tmp_path / "t.csv"
    truth.write_text("/p1,A\n/p2,B\n", encoding="utf-8")
    assign = write_jsonl(tmp_path / "a.jsonl", [{"url": "/p1", "class": "x"}])
    assert_one_line_error(run("--assignments", assign, "--truth", str(truth)), "url", "class")


def test_empty_truth(tmp_path):
    truth = tmp_path / "t.csv"
    truth.write_text("url,class\n", encoding="utf-8")
    assign = write_jsonl(tmp_path / "a.jsonl", [{"url": "/p1", "class": "x"}])
    assert_one_line_error(run("--assignments", assign, "--truth", str(truth)), "no pages")


def test_binary_file(tmp_path):
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage\x80\n")
    assert_one_line_error(run("--assignments", str(path), "--truth", worked_truth(tmp_path)))
