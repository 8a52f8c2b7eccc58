#!/usr/bin/env bash
# Builds MODULE_DIR/vendor from Debian's Go sources (/usr/share/gocode), so a Go module that uses this
# client builds in module mode with no network: `GOFLAGS=-mod=vendor GOPROXY=off go build ./...`.
# Modules cannot be downloaded here and Debian ships sources, not a module cache; a vendor directory is
# the one module-mode input Go reads without fetching anything (it never loads dependencies' go.mod).
#
#   bash clients/go/vendor-debian.sh clients/go            # this module (its example)
#   bash clients/go/vendor-debian.sh ~/my-agent            # a module requiring acms/clients/go, with
#                                                          # `replace acms/clients/go => /path/to/clients/go`
#
# MODULE_DIR/go.mod must require every module it imports from (its indirect ones too), at the versions
# Debian packages (see clients/go/go.mod). Needs golang-go, golang-google-grpc-dev,
# golang-google-genproto-dev, golang-github-golang-protobuf-1-5-dev (the newer protobuf runtime).
set -euo pipefail
MODULE_DIR=$(cd "${1:?usage: vendor-debian.sh MODULE_DIR}" && pwd)
GOCODE=${ACMS_GOCODE:-/usr/share/gocode/src}
exec /usr/bin/python3 - "$MODULE_DIR" "$GOCODE" <<'PY'
import os, re, shutil, subprocess, sys, tempfile

module_dir, gocode = sys.argv[1], sys.argv[2]
gomod = open(os.path.join(module_dir, "go.mod")).read()
module = re.search(r"^module\s+(\S+)", gomod, re.M).group(1)
go_version = re.search(r"^go\s+(\S+)", gomod, re.M).group(1)
block = re.search(r"^require\s*\((.*?)^\)", gomod, re.M | re.S)
requires = re.findall(r"^\s*(\S+)\s+(v\S+)", block.group(1), re.M) if block else []
requires += re.findall(r"^require\s+(\S+)\s+(v\S+)", gomod, re.M)
replaces = {m: os.path.normpath(os.path.join(module_dir, d)) for m, d in re.findall(r"^replace\s+(\S+)\s+=>\s+(\S+)\s*$", gomod, re.M)}
raw_replaces = dict(re.findall(r"^replace\s+(\S+)\s+=>\s+(\S+)\s*$", gomod, re.M))

# The packages the module needs, listed in GOPATH mode over a GOPATH made of the module, its local
# replacements and Debian's sources (the same resolution the module will get from vendor/).
gopath = tempfile.mkdtemp(prefix="acms-vendor-")
try:
    def link(path, target):
        dst = os.path.join(gopath, "src", path)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.symlink(target, dst)
    link(module, module_dir)
    for m, d in replaces.items():
        link(m, d)
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": f"{gopath}:{os.path.dirname(gocode)}", "GOFLAGS": ""}
    # The module's own packages, named one by one (GOPATH patterns do not follow the symlinks).
    own = sorted({module + ("/" + os.path.relpath(d, module_dir) if d != module_dir else "")
                  for d, dirs, files in os.walk(module_dir)
                  if not os.path.relpath(d, module_dir).split(os.sep)[0] in ("vendor", "testdata")
                  and any(f.endswith(".go") and not f.endswith("_test.go") for f in files)})
    listed = subprocess.run(["go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", *own],
                            cwd=os.path.join(gopath, "src", module), env=env, check=True, capture_output=True, text=True).stdout.split()
finally:
    shutil.rmtree(gopath)

packages = sorted(p for p in set(listed) if p != module and not p.startswith(module + "/"))
def owner(pkg):
    best = max((m for m, _ in requires if pkg == m or pkg.startswith(m + "/")), key=len, default=None)
    if best is None:
        sys.exit(f"vendor-debian: {pkg} belongs to no module required in {module_dir}/go.mod")
    return best

vendor = os.path.join(module_dir, "vendor")
shutil.rmtree(vendor, ignore_errors=True)
os.makedirs(vendor)
by_module = {}
for pkg in packages:
    m = owner(pkg)
    by_module.setdefault(m, []).append(pkg)
    src = os.path.join(replaces[m], pkg[len(m):].lstrip("/")) if m in replaces else os.path.join(gocode, pkg)
    dst = os.path.join(vendor, pkg)
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        p = os.path.join(src, f)
        if os.path.isfile(p) and not f.endswith("_test.go"):
            shutil.copy(p, dst)
lines = []
for m, v in requires:
    lines.append(f"# {m} {v}" + (f" => {raw_replaces[m]}" if m in raw_replaces else ""))
    lines.append(f"## explicit; go {go_version}")
    lines += by_module.get(m, [])
for m, d in raw_replaces.items():
    lines.append(f"# {m} => {d}")
open(os.path.join(vendor, "modules.txt"), "w").write("\n".join(lines) + "\n")
print(f"vendor-debian: {len(packages)} packages of {len(by_module)} modules into {vendor}")
PY
