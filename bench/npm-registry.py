#!/usr/bin/env python3
"""bench/npm-registry.py - the npm bench's local registry (bench/npm.sh).

  npm-registry.py fill DIR     DIR/package-lock.json (made by npm from DIR/package.json
                               against the real registry) -> DIR/meta/*.json and
                               DIR/tarballs/*.tgz: each package's metadata, cut to the
                               versions the lock names, and those tarballs, checked
                               against the lock's integrity. The only step that talks to
                               the real registry; bench/npm.sh runs it once, outside the
                               test network, and keeps DIR for the next run.
  npm-registry.py serve DIR ADDR PORT URL
                               serve DIR as a registry on ADDR:PORT: GET /NAME (and
                               /@SCOPE%2fNAME) answers the metadata with every tarball URL
                               under URL (the registry's name: an allowlisted client
                               may dial only names, not the bare address),
                               GET /-/FILE a tarball; anything else is 404. Threaded, as
                               npm fetches in parallel.
"""
import base64
import concurrent.futures
import hashlib
import http.server
import json
import os
import socketserver
import sys
import urllib.parse
import urllib.request

UPSTREAM = "https://registry.npmjs.org/"
ABBREVIATED = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"


def meta_file(name):
    """The file name that holds NAME's metadata (a scope's slash made safe)."""
    return name.replace("/", "%2f") + ".json"


def tarball_file(name, version):
    """The file name of NAME@VERSION's tarball."""
    return "%s-%s.tgz" % (name.replace("/", "%2f"), version)


def fetch(url, accept=None):
    """The body at URL from the real registry."""
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read()


def check_integrity(data, integrity, what):
    """Fail unless DATA matches the lock's subresource-integrity string."""
    algo, _, want = integrity.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != want:
        raise SystemExit("npm-registry: %s: integrity mismatch" % what)


def fill(d):
    """Fetch the metadata and tarballs DIR/package-lock.json names."""
    lock = json.load(open(os.path.join(d, "package-lock.json")))
    wanted = {}
    for path, p in lock["packages"].items():
        if not path:
            continue
        name = p.get("name") or path.rsplit("node_modules/", 1)[1]
        wanted.setdefault(name, {})[p["version"]] = p
    os.makedirs(os.path.join(d, "meta"), exist_ok=True)
    os.makedirs(os.path.join(d, "tarballs"), exist_ok=True)

    def one(name):
        doc = json.loads(fetch(UPSTREAM + urllib.parse.quote(name, safe="@"), ABBREVIATED))
        keep = {v: doc["versions"][v] for v in wanted[name]}
        for v, p in wanted[name].items():
            out = os.path.join(d, "tarballs", tarball_file(name, v))
            if not os.path.exists(out):
                data = fetch(doc["versions"][v]["dist"]["tarball"])
                check_integrity(data, p["integrity"], "%s@%s" % (name, v))
                with open(out + ".tmp", "wb") as f:
                    f.write(data)
                os.rename(out + ".tmp", out)
        latest = doc.get("dist-tags", {}).get("latest")
        if latest not in keep:
            latest = max(keep, key=lambda v: [int(x) if x.isdigit() else 0
                                              for x in v.split("-")[0].split(".")])
        doc = {"name": name, "dist-tags": {"latest": latest}, "versions": keep,
               "modified": doc.get("modified", "")}
        with open(os.path.join(d, "meta", meta_file(name)), "w") as f:
            json.dump(doc, f)
        return len(keep)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        n = sum(pool.map(one, sorted(wanted)))
    print("npm-registry: %d packages, %d versions in %s" % (len(wanted), n, d))


class Registry(http.server.BaseHTTPRequestHandler):
    """Answers metadata and tarballs from the filled directory."""
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, code, body, ctype):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        d, base = self.server.dir, self.server.base
        if path.startswith("/-/"):
            f = os.path.join(d, "tarballs", os.path.basename(urllib.parse.unquote(path[3:])))
            if os.path.isfile(f):
                return self.send(200, open(f, "rb").read(), "application/octet-stream")
            return self.send(404, b"{}", "application/json")
        name = urllib.parse.unquote(path[1:])
        f = os.path.join(d, "meta", meta_file(name))
        if "/" in name.lstrip("@").split("/", 1)[-1] or not os.path.isfile(f):
            return self.send(404, b'{"error":"not found"}', "application/json")
        doc = json.load(open(f))
        for v, p in doc["versions"].items():
            p["dist"]["tarball"] = base + "-/" + urllib.parse.quote(tarball_file(name, v))
        self.send(200, json.dumps(doc).encode(), "application/json")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default listen backlog is 5: npm opens 15 and more
    # connections at once, and the SYNs past the backlog were dropped and
    # sent again a second later (connect p90 1.0 s, direct or sandboxed). A
    # registry does not do that; node's happy eyeballs then gave up on IPv4
    # after 250 ms in a sandbox, whose tap0 has an IPv6 address, and npm
    # retried 10 s later (bimodal boxy rows: 8 s or 16 s).
    request_queue_size = 1024


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "fill":
        return fill(sys.argv[2])
    if len(sys.argv) == 6 and sys.argv[1] == "serve":
        srv = Server((sys.argv[3], int(sys.argv[4])), Registry)
        srv.dir = sys.argv[2]
        srv.base = sys.argv[5].rstrip("/") + "/"
        srv.serve_forever()
    raise SystemExit("usage: npm-registry.py fill DIR | serve DIR ADDR PORT URL")


if __name__ == "__main__":
    main()
