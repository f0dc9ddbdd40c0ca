# C# compiler for the C# analyzer.  Two variants, chosen by CSHARP_COMPILER:
#   mcs (default): Debian's mono-mcs on the slim Debian base.  Mono's own compiler, C# up to about 7.
#   csc:           Roslyn, for code that needs a modern C# compiler.  The base must already carry it: build
#                  with BASE_IMAGE=mono:6.12 (the official mono image ships Roslyn's `csc` next to `mcs`).
# Either way the image has `benchsmith-csc`, which runs the chosen compiler; both print diagnostics as
# `file(line,col): error CSnnnn: message`.
# The analyzer (analyzers/csharp/compile.py) always runs `mcs` in this image, in both variants (the mono base
# has it too), with the down-level pass and mcs's `--parse` pass: the mono image's `csc` is Roslyn for .NET
# Framework, which has no parse-only mode and does not read current C# (records, file-scoped namespaces) either.
# Roslyn is the analyzer's first choice only locally, where `dotnet` with an SDK is on PATH.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG CSHARP_COMPILER=mcs
RUN set -eu; \
    case "${CSHARP_COMPILER}" in \
      mcs) apt-get update \
           && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mono-mcs \
           && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb ;; \
      csc) command -v csc >/dev/null || { echo "CSHARP_COMPILER=csc needs a base image with Roslyn's csc on PATH, e.g. BASE_IMAGE=mono:6.12" >&2; exit 1; } ;; \
      *) echo "CSHARP_COMPILER must be mcs or csc, not '${CSHARP_COMPILER}'" >&2; exit 1 ;; \
    esac; \
    compiler="$(command -v "${CSHARP_COMPILER}")"; \
    printf '#!/bin/sh\nexec %s "$@"\n' "$compiler" > /usr/local/bin/benchsmith-csc; \
    chmod 755 /usr/local/bin/benchsmith-csc; \
    benchsmith-csc --version
LABEL org.benchsmith.image="csharp"
LABEL org.benchsmith.csharp-compiler="${CSHARP_COMPILER}"
# Mono keeps per-user state under HOME; the root is read-only, /tmp is the writable tmpfs.
ENV LANG=C.UTF-8 HOME=/tmp MONO_DISABLE_SHM=1
WORKDIR /tmp
CMD ["benchsmith-csc", "--version"]
