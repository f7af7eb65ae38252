# Builds a Swift package (e.g. a Vapor or Hummingbird server) and runs it on the slim Swift image.
# Adapt: the Swift version, the product name (App), the port and the arguments.

FROM swift:6.0.3-jammy AS build
WORKDIR /src
# Resolve packages first so they stay cached while only the sources change.
COPY Package.swift Package.resolved ./
RUN swift package resolve
COPY . .
RUN swift build -c release --static-swift-stdlib \
    && mkdir -p /out \
    && cp "$(swift build -c release --show-bin-path)/App" /out/App

# The slim image has the runtime libraries but no compiler.
FROM swift:6.0.3-jammy-slim
RUN useradd --system --user-group --home-dir /app --no-create-home --shell /usr/sbin/nologin app
WORKDIR /app
COPY --from=build /out/App /app/App

USER app
EXPOSE 8080
ENTRYPOINT ["/app/App"]
CMD ["serve", "--hostname", "0.0.0.0", "--port", "8080"]
