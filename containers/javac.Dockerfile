# javac for the Java analyzer: Debian's OpenJDK 17, headless (no X11/GUI libraries).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
# The man1 directory: slim images drop man pages, and the JDK's postinst registers man-page alternatives
# into it (installation fails without it on some slim bases).
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jdk-headless \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && javac -version
LABEL org.benchsmith.image="javac"
# The JVM writes its hsperfdata under /tmp, the one writable place at run time.
ENV LANG=C.UTF-8 HOME=/tmp
WORKDIR /tmp
CMD ["javac", "-version"]
