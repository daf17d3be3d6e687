"""A flood of header lines before the key is checked: what it costs the HTTP server.

    python -m benchmarks.http_api.header_flood [--mb 400] [--before main]

For each arm (``before``: the server of ``--before``, from a temporary ``git worktree``;
``after``: this tree) one ``mercury-lsp http --api-key-file`` on the tiny model is sent a
request line and then ``X-Flood:`` header lines, 1 KB each, up to ``--mb`` megabytes or until
the server stops reading, without a key. Recorded: the status it answered, the bytes it took
before that, its RSS (``VmRSS``) before and after and its peak (``VmHWM``), and the seconds.
Prints a table, writes ``benchmarks/results/http_header_flood.json`` and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import socket
import tempfile
import time
from pathlib import Path

from benchmarks import RESULTS as RESULTS_DIR
from benchmarks.common.checkouts import checkout, cli_argv, commit_of
from benchmarks.http_api.server import HttpProcess

RESULTS = RESULTS_DIR / "http_header_flood.json"
KEY = "flood-benchmark-key-0123456789"
LINE = b"X-Flood: " + b"a" * 1013 + b"\r\n"  # 1 KiB a line
BLOCK_LINES = 64  # lines per send
ANSWER_TIMEOUT_S = 120.0


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field)) / 1024


def status_of(sock: socket.socket) -> int | None:
    sock.settimeout(ANSWER_TIMEOUT_S)
    data = b""
    try:
        while b"\r\n" not in data and (chunk := sock.recv(4096)):
            data += chunk
    except OSError:
        pass
    parts = data.split(b"\r\n", 1)[0].split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def flood(argv: list[str], model: str, key_file: Path, megabytes: int) -> dict:
    srv = HttpProcess(["--api-key-file", str(key_file), "--model", model, "--threads", "1"], argv=argv)
    try:
        host, port = srv.url.removeprefix("http://").rsplit(":", 1)
        before = rss_mb(srv.pid)
        sock = socket.create_connection((host, int(port)), timeout=ANSWER_TIMEOUT_S)
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        block, sent, t0 = LINE * BLOCK_LINES, 0, time.perf_counter()
        try:
            while sent < megabytes * 2**20:
                sock.sendall(block)
                sent += len(block)
            sock.sendall(b"\r\n")  # the head ends: a server that read it all answers now
        except OSError:
            pass  # the server stopped reading
        status = status_of(sock)
        seconds = time.perf_counter() - t0
        sock.close()
        after, peak = rss_mb(srv.pid), rss_mb(srv.pid, "VmHWM")
        return {"status": status, "sent_mb": round(sent / 2**20, 1), "rss_before_mb": round(before, 1),
                "rss_after_mb": round(after, 1), "rss_growth_mb": round(after - before, 1),
                "vm_hwm_mb": round(peak, 1), "seconds": round(seconds, 2), "alive": srv.alive}
    finally:
        srv.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mb", type=int, default=400, help="megabytes of header lines to send at most")
    p.add_argument("--before", default="main", help="the commit (or ref) of the before arm")
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args()
    from mercury_train.testing import make_tiny_checkpoint

    with tempfile.TemporaryDirectory() as tmp:
        model = str(make_tiny_checkpoint(Path(tmp) / "tiny"))
        key_file = Path(tmp) / "key"
        key_file.write_text(KEY + "\n")
        arms = {}
        with checkout(args.before) as tree:
            arms["before"] = flood(cli_argv(tree), model, key_file, args.mb)
        arms["after"] = flood(cli_argv(None), model, key_file, args.mb)
    out = {"benchmark": "http_header_flood", "flood_mb": args.mb, "before": commit_of(args.before)[:12], "arms": arms}
    print(f"{'arm':<7}{'status':>7}{'sent MB':>9}{'RSS before':>11}{'RSS after':>10}{'growth':>8}{'peak':>8}{'s':>7}")
    for name, a in arms.items():
        print(f"{name:<7}{a['status']!s:>7}{a['sent_mb']:>9}{a['rss_before_mb']:>11}{a['rss_after_mb']:>10}"
              f"{a['rss_growth_mb']:>8}{a['vm_hwm_mb']:>8}{a['seconds']:>7}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
