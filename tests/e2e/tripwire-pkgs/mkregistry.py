#!/usr/bin/env python3
"""tests/e2e/tripwire-pkgs/mkregistry.py - npm packages for tests/e2e/tripwire.sh, made
from the directories beside this file, never fetched.

  mkregistry.py pack DIR OUT.tgz        DIR as an npm tarball (every file under "package/")
  mkregistry.py registry SRC OUT        every package directory of SRC but "app" packed into
                                        OUT/tarballs and described in OUT/meta, the layout
                                        bench/npm-registry.py serves (with integrity and
                                        shasum, so npm checks what it downloads)
"""
import base64
import hashlib
import io
import json
import os
import sys
import tarfile


def pack(src):
    """The bytes of an npm tarball of src: files sorted, times and owners fixed."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name)
            info = tar.gettarinfo(path, "package/" + name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 499162500
            info.mode = 0o644
            with open(path, "rb") as f:
                tar.addfile(info, f)
    return buf.getvalue()


def registry(src, out):
    os.makedirs(os.path.join(out, "meta"), exist_ok=True)
    os.makedirs(os.path.join(out, "tarballs"), exist_ok=True)
    for name in sorted(os.listdir(src)):
        if name == "app":
            continue
        pj = json.load(open(os.path.join(src, name, "package.json")))
        data = pack(os.path.join(src, name))
        tgz = "%s-%s.tgz" % (pj["name"], pj["version"])
        with open(os.path.join(out, "tarballs", tgz), "wb") as f:
            f.write(data)
        version = dict(pj)
        version["dist"] = {
            "tarball": "placeholder",   # the server writes its own URL in
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
            "shasum": hashlib.sha1(data).hexdigest(),
        }
        if "scripts" in pj and set(pj["scripts"]) & {"preinstall", "install", "postinstall"}:
            version["hasInstallScript"] = True
        doc = {"name": pj["name"], "dist-tags": {"latest": pj["version"]},
               "versions": {pj["version"]: version}}
        with open(os.path.join(out, "meta", pj["name"] + ".json"), "w") as f:
            json.dump(doc, f)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "pack":
        with open(sys.argv[3], "wb") as f:
            f.write(pack(sys.argv[2]))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "registry":
        return registry(sys.argv[2], sys.argv[3])
    raise SystemExit("usage: mkregistry.py pack DIR OUT.tgz | registry SRC OUT")


if __name__ == "__main__":
    main()
