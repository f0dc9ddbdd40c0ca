"""The card's provenance, cut-off and construction-cost sections, read from stats.json and cost.json."""

from __future__ import annotations

import json

from benchsmith.builders.cceval.card import write_card
from benchsmith.repobuild.cost import CostMeter, cost_row, total_cost, write_cost
from benchsmith.jsonio import write_json

REL = {"registry": "pypi", "name": "tabulate", "version": "0.10.0", "released": "2026-03-01T12:00:00Z",
       "first_released": "2011-05-09T08:00:00Z", "license_declared": "MIT", "license_spdx": "MIT",
       "homepage": None, "repository": None, "artifact_url": "https://files.pythonhosted.org/t.tar.gz",
       "artifact_name": "t.tar.gz", "digest": "sha256:" + "c" * 64, "size": 10}


def test_card_states_registry_dates_licences_cut_off_and_cost(tmp_path):
    lang = tmp_path / "python"
    rows = [{"repository": "pypi-tabulate-0.10.0", "status": "ok", "files": 10, "examples": 7, "excluded": 1,
             "provenance": REL},
            {"repository": "local", "status": "ok", "files": 3, "examples": 1, "excluded": 0, "provenance": None}]
    write_json(lang / "stats.json", {"dropped": {}, "per_repository": rows,
                                     "cut_off": {"created_after": None, "released_after": "2026-01-01"}})
    shards = [tmp_path / "shards" / n for n in ("a", "b", "c")]
    for shard, row in zip(shards, (cost_row(30.0, 6.0, 30.0, 7), cost_row(5.0, 1.0, 0.0, 1), None)):
        shard.mkdir(parents=True)
        if row is not None:  # a failed shard has none
            write_json(shard / "cost.json", row)
    shard_stats = [{"repository": "pypi-tabulate-0.10.0"}, {"repository": "local"}, {"repository": "failed"}]
    cost = write_cost(lang, shards, shard_stats)
    assert cost["total"]["examples"] == 8 and cost["total"]["repositories_measured"] == 2
    assert cost["total"]["examples_per_cpu_hour"] == round(8 * 3600 / 37.0, 1)
    text = write_card(tmp_path, ["build-ccEval"], {}).read_text()
    assert "Cut-off: this version released on or after 2026-01-01." in text
    assert ("| python | pypi-tabulate-0.10.0 | pypi:tabulate | 0.10.0 | 2026-03-01 | 2011-05-09 | MIT | "
            "sha256:cccccccccccc |") in text
    assert "| python | pypi-tabulate-0.10.0 | 30.0 | 6.0 | 30.0 | 7 | 700.0 |" in text
    assert "| python | **total** | 35.0 | 7.0 | 30.0 | 8 | 778.4 |" in text
    assert json.loads((lang / "cost.json").read_text())["per_repository"][2]["cost"] is None


def test_card_without_registry_sources_or_cost_says_so(tmp_path):
    write_json(tmp_path / "python" / "stats.json", {"dropped": {}, "per_repository": []})
    text = write_card(tmp_path, ["build-ccEval"], {}).read_text()
    assert "Cut-off: none was applied" in text and "No repository came from a package registry" in text
    assert "## Construction cost" not in text


def test_meter_counts_reaped_toolchain_cpu(tmp_path):
    import subprocess
    import sys

    meter = CostMeter.start()
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    row = meter.stop(3)
    assert row["toolchain_cpu_seconds"] > 0.05 and row["wall_seconds"] >= row["toolchain_cpu_seconds"] * 0.5
    assert row["examples"] == 3 and row["examples_per_cpu_hour"] > 0
    assert total_cost([{"cost": None}]) is None
