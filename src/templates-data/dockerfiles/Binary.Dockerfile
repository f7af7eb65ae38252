# Runs a binary that was built elsewhere (for example by an earlier CI job) on a small Debian base.
# Adapt: the path of the binary (bin/app), the exposed port and the runtime packages it links against.
FROM debian:12.8-slim

# Runtime packages: CA certificates for outgoing TLS and time zone data. Add what your binary needs.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/*

# A dedicated unprivileged account; the binary never runs as root.
RUN groupadd --system app \
    && useradd --system --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app

WORKDIR /app
COPY --chmod=0755 bin/app /app/app

USER app
EXPOSE 8080
ENTRYPOINT ["/app/app"]
