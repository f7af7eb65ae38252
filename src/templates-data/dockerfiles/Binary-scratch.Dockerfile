# Runs a statically linked binary on an empty image: no shell, no package manager.
# Adapt: the path of the binary (bin/app) and the exposed port. The binary must not need libc.

# Helper stage: collects CA certificates, time zone data and a passwd entry for the unprivileged user.
FROM alpine:3.21.0 AS base
RUN apk add --no-cache ca-certificates tzdata \
    && echo "app:x:10001:10001:app:/nonexistent:/sbin/nologin" > /tmp/passwd \
    && echo "app:x:10001:" > /tmp/group

FROM scratch
COPY --from=base /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=base /usr/share/zoneinfo /usr/share/zoneinfo
COPY --from=base /tmp/passwd /etc/passwd
COPY --from=base /tmp/group /etc/group
COPY --chmod=0755 bin/app /app

# Numeric ids, so the runtime does not need to resolve the name.
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/app"]
