#!/usr/bin/python3
"""A WebDAV-style store that, like Apache's mod_dav (RFC 4918), makes no folders on PUT: a PUT
into a folder that does not exist answers 409 Conflict, MKCOL makes one folder (201; 405 where it
exists, 409 where its parent does not), GET reads a file (404 where there is none). For
run_remote_cache_test.sh, which nginx cannot stand in for (it answers such a PUT with 500).

    folderless_dav.py ROOT PORT_FILE   serves ROOT on 127.0.0.1, a free port written to PORT_FILE
"""
import http.server
import os
import sys

root = os.path.abspath(sys.argv[1])


class Handler(http.server.BaseHTTPRequestHandler):
    def path_of(self):
        return os.path.join(root, self.path.split("?")[0].lstrip("/"))

    def answer(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        p = self.path_of()
        if not os.path.isfile(p):
            return self.answer(404)
        with open(p, "rb") as f:
            self.answer(200, f.read())

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        p = self.path_of()
        if not os.path.isdir(os.path.dirname(p)):
            return self.answer(409)
        with open(p, "wb") as f:
            f.write(body)
        self.answer(201)

    def do_MKCOL(self):
        p = self.path_of().rstrip("/")
        if os.path.isdir(p):
            return self.answer(405)
        if not os.path.isdir(os.path.dirname(p)):
            return self.answer(409)
        os.mkdir(p)
        self.answer(201)

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.command, self.path))


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
