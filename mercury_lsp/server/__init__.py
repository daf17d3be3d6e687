"""The language server: pygls 2 on uvloop, over stdio or TCP (ruff_server-style layout).

* ``protocol`` — the protocol rules on top of pygls (one response per request, ordering);
* ``app`` — ``MercuryServer``, the state of one connection, and ``build_server``;
* ``handlers/`` — one module per request family, thin (parse, call a feature, convert);
* ``transport`` — the framed JSON-RPC reader over stdio/TCP, ``run_stdio``/``run_tcp``;
* ``lifetime`` — a stdio daemon ends when its client process does;
* ``logs`` — log levels and the redaction of user code.
"""

from mercury_lsp.server.app import MercuryServer, build_server
from mercury_lsp.server.logs import configure_logging
from mercury_lsp.server.transport import run, run_stdio, run_tcp, serve_stream

__all__ = ["MercuryServer", "build_server", "configure_logging", "run", "run_stdio", "run_tcp", "serve_stream"]
