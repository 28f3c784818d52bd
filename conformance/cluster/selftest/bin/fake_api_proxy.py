#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fake cluster's `kubectl proxy`: an HTTP server on a unix socket that
answers GETs as the API server does, from the fake cluster directory:
<path with / as _>.json holds an object or a list (a list is served as the
API server serves it, items without kind and apiVersion), a missing file is
a NotFound Status.  Every request line, query included, is appended to
proxy-requests.log.

Usage: fake_api_proxy.py FAKE_CLUSTER_DIR SOCKET"""
import http.server
import json
import os
import socketserver
import sys
import urllib.parse

DIR, SOCKET = sys.argv[1], sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def address_string(self):
        return "unix"

    def reply(self, code, doc):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        with open(os.path.join(DIR, "proxy-requests.log"), "a") as log:
            log.write(urllib.parse.unquote(self.path) + "\n")
        if url.path == "/version":
            self.reply(200, {"major": "1", "minor": "37"})
            return
        name = "api" + url.path.replace("/", "_") + ".json"
        try:
            with open(os.path.join(DIR, name)) as f:
                doc = json.load(f)
        except FileNotFoundError:
            parts = url.path.strip("/").split("/")
            self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                             "reason": "NotFound", "code": 404,
                             "message": f'{parts[-2]} "{parts[-1]}" not found'})
            return
        if "items" in doc:
            for item in doc["items"]:
                item.pop("kind", None)
                item.pop("apiVersion", None)
        self.reply(200, doc)


class Server(socketserver.UnixStreamServer):
    def get_request(self):
        request, _ = super().get_request()
        return request, ("unix", 0)


if os.path.exists(SOCKET):
    os.unlink(SOCKET)
with Server(SOCKET, Handler) as server:
    server.serve_forever()
