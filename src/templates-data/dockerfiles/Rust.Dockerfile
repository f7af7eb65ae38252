# Builds a Rust crate in release mode and runs the binary on Debian slim.
# Adapt: the Rust version, the binary name (app, from Cargo.toml), the port and runtime packages.

FROM rust:1.83.0-slim-bookworm AS build
WORKDIR /src
COPY . .
# --locked builds exactly what Cargo.lock records.
RUN cargo build --release --locked \
    && cp target/release/app /usr/local/bin/app

FROM debian:12.8-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system app \
    && useradd --system --gid app --no-create-home --shell /usr/sbin/nologin app
COPY --from=build /usr/local/bin/app /usr/local/bin/app

USER app
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/app"]
