# TypeScript compiler for the TypeScript analyzer: Debian's nodejs and the TypeScript release pinned in
# scripts/setup_toolchains.sh (TypeScript has no runtime dependencies, so its npm tarball is the whole install).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
ARG TYPESCRIPT_VERSION=5.6.3
# npm's published integrity for that tarball (sha512), in hex; change both together.
ARG TYPESCRIPT_SHA512=863712d6685fbb28b8596f085ad8cfedbac3ac6d9cb8366e932ad8ad26aea1718d831d12ef371e3f4eda758909c9c12be7a04e51334fcdb227a2888dddf9f5ab
ADD https://registry.npmjs.org/typescript/-/typescript-${TYPESCRIPT_VERSION}.tgz /tmp/typescript.tgz
RUN echo "${TYPESCRIPT_SHA512}  /tmp/typescript.tgz" | sha512sum -c - \
 && mkdir -p /opt/typescript \
 && tar -xzf /tmp/typescript.tgz -C /opt/typescript --strip-components=1 --no-same-owner \
 && rm /tmp/typescript.tgz \
 && ln -s /opt/typescript/bin/tsc /usr/local/bin/tsc \
 && tsc --version
LABEL org.benchsmith.image="tsc"
ENV LANG=C.UTF-8 HOME=/tmp
WORKDIR /tmp
CMD ["tsc", "--version"]
