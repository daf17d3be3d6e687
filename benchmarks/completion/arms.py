"""The arms of the completion benchmark, in one table: what ``run --arm NAME`` measures.

A **server arm** is a name and the settings sent to ``mercury-lsp serve`` as
``initializationOptions`` (the contents of the ``mercury`` section, camelCase field names as in
``mercury_lsp/config.py``; the runner also answers a ``workspace/configuration`` pull for the
``mercury`` section with them). One fresh server per arm and repository. A **baseline arm** is
computed by the benchmark itself (``baselines``), no server.

Contract with the server, for the repository-memory arms below (issue #24):

* **Readiness.** After ``initialized`` the runner waits for ``mercury/status`` with state
  ``ready`` (``error`` aborts the arm), then until every work-done progress the server began
  (``window/workDoneProgress/create`` + ``$/progress`` begin ... end) has ended and none began or
  reported for ``SETTLE_S``; the first case starts only then. A memory that indexes the workspace
  in the background must report that work as work-done progress, or it is measured half-built.
* **Settings.** An unknown or invalid setting must be reported once by ``window/showMessage``
  (``config.parse_settings`` does today). The runner prints every ``showMessage`` and stops the
  arm when one says a setting was ignored (``--allow-setting-problems`` runs it anyway), so a
  misspelt arm never yields a silent default-settings row.
* **No answer on disk.** Before each case the file on disk holds the cut text (target removed)
  and a ``workspace/didChangeWatchedFiles`` (changed) is sent before ``didOpen`` with the same
  text; after the case ``didClose``, the original bytes go back and the change is notified again.
  A memory must take the open document, then the file on disk, over what it indexed earlier.
  A persisted index built before the run holds the original file: it must not answer from it.

The memory arms, cumulative from ``both`` on, as issue #24's ablation lists them (the settings
are ``mercury_lsp/config.py``'s ``memory`` and ``completion`` sections; docs/memory.md):

* ``model_only`` — the memory off: drafts of the model alone, ungated (the daemon as it was);
* ``memory_only`` — the memory's candidates alone, ranked, no model draft, no gate;
* ``both`` — memory candidates and a model draft on every request through the one ranker;
* ``+retrieval`` — ``both`` plus retrieved definitions/chunks in the model's window;
* ``+gate`` — ``+retrieval`` plus the precision gate at its default threshold;
* ``+identifier_check`` — ``+gate`` plus the identifier check on the model's drafts. It differs
  from the defaults (the ``daemon`` arm) in drafting on every request: by default the embedded
  model does not draft (``completion.modelDrafts`` "auto"), and no share of the window goes to
  retrieval (``memory.retrievalShare`` 0).
"""

from __future__ import annotations

from dataclasses import dataclass

SETTLE_S = 1.0  # the server is idle when no work-done progress began or reported for this long
RETRIEVAL_SHARE = 0.25  # of the model's window, in the arms that retrieve (a quarter: room for two chunks)


@dataclass(frozen=True)
class Arm:
    name: str
    kind: str  # "server" | "baseline"
    settings: dict | None  # initializationOptions (server arms); None: a placeholder to fill
    about: str


def _server(name: str, settings: dict | None, about: str) -> Arm:
    return Arm(name, "server", settings, about)


def _baseline(name: str, about: str) -> Arm:
    return Arm(name, "baseline", None, about)


ARMS: dict[str, Arm] = {a.name: a for a in (
    _server("daemon", {}, "the daemon with default settings, as a user gets it"),
    # ---- the repository memory's ablation (issue #24)
    _server("model_only", {"memory": {"enabled": False},
                           "completion": {"modelDrafts": "always", "minProbability": 0, "identifierCheck": False}},
            "the memory off, the model's drafts alone, ungated"),
    _server("memory_only", {"completion": {"modelDrafts": "never", "minProbability": 0, "identifierCheck": False}},
            "the memory's candidates alone, ranked (no model draft, no gate)"),
    _server("both", {"completion": {"modelDrafts": "always", "minProbability": 0, "identifierCheck": False}},
            "memory candidates and a model draft on every request, one ranker, no gate"),
    _server("+retrieval", {"memory": {"retrievalShare": RETRIEVAL_SHARE},
                           "completion": {"modelDrafts": "always", "minProbability": 0, "identifierCheck": False}},
            "both + retrieved definitions and chunks in the model's window"),
    _server("+gate", {"memory": {"retrievalShare": RETRIEVAL_SHARE},
                      "completion": {"modelDrafts": "always", "identifierCheck": False}},
            "+retrieval + the precision gate at its default"),
    _server("+identifier_check", {"memory": {"retrievalShare": RETRIEVAL_SHARE}, "completion": {"modelDrafts": "always"}},
            "+gate + the identifier check on the model's drafts"),
    _server("linear_ranker", {"completion": {"ranker": "linear", "minProbability": 0.16}},
            "the defaults but the logistic ranker, at the gate chosen for it (the default before the trees)"),
    # ---- no-model baselines (benchmarks/completion/baselines.py)
    _baseline("line_copy", "issue #24's '20 lines': most frequent continuation of the typed line"),
    _baseline("longest_suffix", "issue #24's '40 lines': longest suffix before the cursor, its most "
                                "frequent rest of line"),
    _baseline("longest_suffix_30", "longest_suffix, shown only when the match is >= 30 characters"),
)}
DEFAULT_ARMS = ("daemon", "line_copy", "longest_suffix", "longest_suffix_30")


def resolve(names: list[str] | None) -> list[Arm]:
    """The arms named (default ``DEFAULT_ARMS``); ValueError for an unknown name or a placeholder."""
    out = []
    for name in names or DEFAULT_ARMS:
        arm = ARMS.get(name)
        if arm is None:
            raise ValueError(f"unknown arm {name!r}; the arms are: {', '.join(ARMS)}")
        if arm.kind == "server" and arm.settings is None:
            raise ValueError(f"arm {name!r} is a placeholder: put its initializationOptions in "
                             f"benchmarks/completion/arms.py (the contract is in its docstring)")
        out.append(arm)
    return out
