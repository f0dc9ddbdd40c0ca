# pylint for the Python analyzer.  The pins below are the defaults; `python -m benchsmith.containers build`
# passes the exact set installed in the host's environment (PYLINT_REQUIREMENTS), so the local and container
# backends run the same pylint and astroid and report the same diagnostics.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
# Shared first layer: byte-identical in sandbox.Dockerfile, so the engine's build cache stores it once.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv python-is-python3 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
ARG PYLINT_REQUIREMENTS="pylint==4.1.4 astroid==4.3.4 dill==0.4.1 isort==9.0.2 mccabe==0.7.0 mypy-extensions==1.1.0 platformdirs==4.14.8 tomlkit==0.15.2"
# A venv: Debian's python3 refuses system-wide pip installs (PEP 668), and a venv keeps pylint's
# dependencies apart from anything Debian ships.  --no-deps: every package is in the pinned list.
RUN python3 -m venv /opt/pylint \
 && /opt/pylint/bin/pip install --no-cache-dir --disable-pip-version-check --no-deps ${PYLINT_REQUIREMENTS} \
 && /opt/pylint/bin/pip check \
 && /opt/pylint/bin/pylint --version
LABEL org.benchsmith.image="pylint"
# HOME on the tmpfs the runner mounts: pylint keeps its stats cache there, and the root is read-only.
ENV PATH=/opt/pylint/bin:$PATH LANG=C.UTF-8 HOME=/tmp PYTHONDONTWRITEBYTECODE=1
WORKDIR /tmp
CMD ["pylint", "--version"]
