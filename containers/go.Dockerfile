# Go toolchain for the Go analyzer: Debian's golang-go (go/types and the standard library's export data).  The
# analyzer builds its own small type checker with it (stdlib only) and never fetches a module: it runs with
# GOPROXY=off, GOTOOLCHAIN=local, GOWORK=off and a private GOPATH/GOCACHE under /tmp.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends golang-go \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && GOTOOLCHAIN=local go version
LABEL org.benchsmith.image="go"
# The root is read-only at run time; the build cache and GOPATH live in the writable /tmp.
ENV LANG=C.UTF-8 HOME=/tmp GOPATH=/tmp/gopath GOCACHE=/tmp/gocache GOPROXY=off GOTOOLCHAIN=local GOWORK=off \
    GOTELEMETRY=off
WORKDIR /tmp
CMD ["go", "version"]
