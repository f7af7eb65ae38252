# Runs a Deno application; dependencies are downloaded and type-checked in a separate stage.
# Adapt: the Deno version, the entry point (main.ts), the permission flags and the port.

FROM denoland/deno:debian-2.1.4 AS build
ENV DENO_DIR=/deno-dir
WORKDIR /app
COPY . .
# Downloads every dependency of main.ts into DENO_DIR and type-checks it once.
RUN deno install --entrypoint main.ts \
    && deno check main.ts

FROM denoland/deno:debian-2.1.4
ENV DENO_DIR=/deno-dir
WORKDIR /app
COPY --from=build --chown=deno:deno /deno-dir /deno-dir
COPY --from=build --chown=deno:deno /app /app

# The official image includes the unprivileged "deno" user.
USER deno
EXPOSE 8000
# Grant only the permissions the application needs.
CMD ["deno", "run", "--cached-only", "--allow-net", "--allow-env", "main.ts"]
