# Runs a Bun application; production dependencies are installed in a separate stage.
# Adapt: the Bun version, the entry point (src/index.ts) and the port.

FROM oven/bun:1.1.38-slim AS deps
WORKDIR /app
COPY package.json bun.lockb ./
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.1.38-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps --chown=bun:bun /app/node_modules ./node_modules
COPY --chown=bun:bun . .

# The official image includes the unprivileged "bun" user.
USER bun
EXPOSE 3000
CMD ["bun", "run", "src/index.ts"]
