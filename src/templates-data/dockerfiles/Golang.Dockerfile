# Builds a Go module and runs the resulting binary on Debian slim.
# Adapt: the main package (./cmd/app), the Go version, the exposed port.

# Build stage: dependencies are downloaded in their own layer so code changes do not refetch them.
FROM golang:1.23.4-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO disabled gives a self-contained binary; enable it if you use cgo packages.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/app ./cmd/app

# Runtime stage: only the binary and CA certificates.
FROM debian:12.8-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system app \
    && useradd --system --gid app --no-create-home --shell /usr/sbin/nologin app
COPY --from=build /out/app /usr/local/bin/app

USER app
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/app"]
