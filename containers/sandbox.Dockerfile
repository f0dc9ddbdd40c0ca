# Execution sandbox for generated programs (HumanExtension): a bare Python interpreter, nothing else.
# The runner adds the isolation at `run` time (--network none, --read-only, --cap-drop ALL, --user, limits);
# the image only has to be small and carry no tools a hostile program could use.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
# Shared first layer: byte-identical in pylint.Dockerfile, so the engine's build cache stores it once.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv python-is-python3 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
LABEL org.benchsmith.image="sandbox"
ENV LANG=C.UTF-8 HOME=/tmp PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /tmp
USER 65534:65534
CMD ["python3"]
