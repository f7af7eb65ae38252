# Builds a Go module on Alpine and runs it on a minimal Alpine image.
# Adapt: the main package (./cmd/app), the Go and Alpine versions, the exposed port.

FROM golang:1.23.4-alpine3.21 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/app ./cmd/app

FROM alpine:3.21.0
RUN apk add --no-cache ca-certificates tzdata \
    && addgroup -S app \
    && adduser -S -G app -H -s /sbin/nologin app
COPY --from=build /out/app /usr/local/bin/app

USER app
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/app"]
