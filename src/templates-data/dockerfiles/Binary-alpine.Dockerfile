# Runs a prebuilt binary on Alpine Linux (musl). Build the binary for musl or statically.
# Adapt: the path of the binary (bin/app), the exposed port and the extra packages.
FROM alpine:3.21.0

# CA certificates and time zone data; add runtime libraries your binary needs here.
RUN apk add --no-cache ca-certificates tzdata

# A system user and group without a login shell.
RUN addgroup -S app && adduser -S -G app -H -h /app -s /sbin/nologin app

WORKDIR /app
COPY --chmod=0755 bin/app /app/app

USER app
EXPOSE 8080
ENTRYPOINT ["/app/app"]
