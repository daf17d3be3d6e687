"""The offline corpus builder over installed distributions (mercury_train/installed.py):
licences from metadata, provenance, filters, and the contamination check in worker processes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from mercury_train.decontam import ContaminationIndex
from mercury_train.installed import build_offline, installed_sources, is_permissive

SOLUTION = "    return sorted(set(numbers_list_with_duplicates_that_we_need))[::-1]\n"
BODY = "".join(f"def function_{i}(value):\n    return value * {i} + {i % 7}\n\n" for i in range(30))


def _dist(site: Path, name: str, version: str, license_line: str, files: dict[str, str]) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{license_line}\n")
    record = []
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
        record.append(f"{rel},,")
    (info / "RECORD").write_text("\n".join(record) + "\n")


def test_offline_build_reads_licences_and_filters(tmp_path):
    site = tmp_path / "site"
    _dist(site, "goodpkg", "1.2.3", "License-Expression: MIT", {
        "goodpkg/core.py": "import os\n\n" + BODY,
        "goodpkg/copy.py": "import os\n\n" + BODY + "  \n",  # a duplicate after normalising
        "goodpkg/tests/test_core.py": "def test_x():\n    assert True\n" * 10,
        "goodpkg/leak.py": "def unique(numbers_list_with_duplicates_that_we_need):\n" + SOLUTION * 3,
        **{f"goodpkg/m{i}.py": f"class T{i}:\n" + BODY.replace("value", f"v{i}") for i in range(20)},
    })
    _dist(site, "badpkg", "0.1", "License: GPL-3.0-or-later", {"badpkg/a.py": BODY})
    _dist(site, "dualpkg", "2.0", "Classifier: License :: OSI Approved :: BSD License\nLicense: BSD AND GPL-2.0",
          {"dualpkg/a.py": BODY.replace("value", "w")})
    sources, refused = installed_sources(paths=[str(site)])
    assert [s.name for s in sources] == ["goodpkg==1.2.3"]
    assert set(refused) == {"badpkg==0.1", "dualpkg==2.0"} and "GPL" in refused["badpkg==0.1"]
    evals = tmp_path / "eval"
    evals.mkdir()
    with gzip.open(evals / "Fake.jsonl.gz", "wt") as fh:
        fh.write(json.dumps({"prompt": "def unique(x):\n", "canonical_solution": SOLUTION, "suffix": ""}) + "\n")
    index = ContaminationIndex.load(evals)
    train, held, report = build_offline(index, 2, sources=sources, refused=refused, heldout_frac=0.2)
    paths = [d["path"] for d in train + held]
    assert report.dropped_tests == 1 and report.dropped_duplicates == 1
    assert report.dropped_contaminated == 1 and report.contaminated_examples == ["site/goodpkg==1.2.3/goodpkg/leak.py"]
    assert len(paths) == len(set(paths)) == 21 and held and train
    assert all(d["source"] == "goodpkg==1.2.3" and d["license"] == "MIT" for d in train + held)
    assert report.contamination_check.startswith("eval-dir:")


def test_permissive_rule():
    assert is_permissive("MIT") and is_permissive("BSD-3-Clause; BSD License") and is_permissive("Apache-2.0")
    assert not is_permissive("MPL-2.0 AND MIT") and not is_permissive("NVIDIA Proprietary Software")
    assert not is_permissive("unknown")
