#!/usr/bin/env python3
"""A JSON-RPC pass-through in front of a real node (anvil) that refuses
eth_getLogs over more than MAX blocks the way hosted providers do
(error -32005 "query exceeds max block range"), and logs each eth_getLogs
range it sees (fromBlock-toBlock, one per line) to LOG.  Every other call,
and every allowed eth_getLogs, is the node's own answer.

    evm_range_proxy.py PORT NODE_URL MAX LOG
"""
import json
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, NODE, MAX, LOG = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]


class Proxy(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        req = json.loads(body)
        if req.get("method") == "eth_getLogs":
            p = req["params"][0]
            lo, hi = int(p["fromBlock"], 16), int(p["toBlock"], 16)
            with open(LOG, "a") as f:
                f.write(f"{lo}-{hi}\n")
            if hi - lo + 1 > MAX:
                out = json.dumps({"jsonrpc": "2.0", "id": req.get("id"),
                                  "error": {"code": -32005,
                                            "message": f"query exceeds max block range {MAX}"}}).encode()
                return self.answer(out)
        fwd = urllib.request.Request(NODE, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(fwd, timeout=10) as r:
            self.answer(r.read())

    def answer(self, out):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()
