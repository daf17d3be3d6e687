"""The pinned corpus (mercury_train/corpus_v2.py): provenance, licences and exact token counts
of the pinned packages' Python. Archives are made in the test; nothing touches the network."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from mercury_train.corpus_v2 import TOKENIZER, archive_source, build_pinned, tokenize
from mercury_train.decontam import ContaminationIndex
from tests.support.archives import BODY, make_sdist, make_wheel, pin_to


def test_build_pinned_reads_licences_and_records_provenance(tmp_path, index_dir):
    stdlib = tmp_path / "stdlib"
    (stdlib / "json").mkdir(parents=True)
    (stdlib / "json" / "x.py").write_text("import re\n\n" + BODY.replace("value", "s"))
    good = make_wheel(index_dir / "good-1.0-py3-none-any.whl", "good", "1.0", "License-Expression: BSD-3-Clause", {
        "good/core.py": "import os\n\n" + BODY, "good/tests/test_core.py": "def test_x():\n    pass\n" * 10,
        "good/copy.py": "import re\n\n" + BODY.replace("value", "s") + "\n\n",  # the stdlib file again
        **{f"good/m{i}.py": f"class T{i}:\n" + BODY.replace("value", f"v{i}") for i in range(12)}})
    sdist = make_sdist(index_dir / "tarred-3.1.tar.gz", "tarred", "3.1",
                       "Classifier: License :: OSI Approved :: MIT License", {"tarred/t.py": BODY.replace("value", "q")})
    gpl = make_wheel(index_dir / "bad-0.1-py3-none-any.whl", "bad", "0.1", "License: GPL-3.0-or-later",
                     {"bad/a.py": BODY.replace("value", "z")})
    pins = [pin_to("good==1.0", good), pin_to("tarred==3.1", sdist), pin_to("bad==0.1", gpl)]
    cache, out = tmp_path / "cache", tmp_path / "out"
    assert archive_source(pins[2], cache)[0] is None
    train, held, report = build_pinned(out, ContaminationIndex.load(None), 2, pins, cache,
                                       builder="pypi-v2", stdlib_root=stdlib, heldout_frac=0.2)
    assert report.refused == {"bad==0.1": "GPL-3.0-or-later"}
    assert set(report.sources) == {"stdlib", "good==1.0", "tarred==3.1"}
    assert report.sources["tarred==3.1"]["license"] == "MIT License"
    assert report.dropped_tests == 1 and report.dropped_duplicates == 1
    docs = train + held
    assert len(docs) == 1 + 13 + 1 and all(d["source"] != "bad==0.1" for d in docs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["builder"] == "pypi-v2" and manifest["packages"] == ["good==1.0", "tarred==3.1"]
    assert {p["spec"]: p["sha256"] for p in manifest["pins"]} == {p.spec: p.sha256 for p in pins[:2]}

    per_source: Counter = Counter()
    stream = tokenize(docs, TOKENIZER.read_text(encoding="utf-8"), per_source)
    assert stream.dtype == np.uint16 and sum(per_source.values()) == stream.size
    assert set(per_source) == {"stdlib", "good==1.0", "tarred==3.1"}
