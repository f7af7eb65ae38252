# Builds and runs a Node.js application with npm on Debian slim.
# Adapt: the Node version, the build script ("npm run build"), the start file (dist/index.js), the port.
# Using yarn or pnpm? Enable corepack and swap the install commands.

# Build stage: full install (dev dependencies included) and the build step.
FROM node:22.11.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build \
    && npm prune --omit=dev

# Runtime stage: production dependencies and build output only.
FROM node:22.11.0-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist

# The official image ships an unprivileged "node" user.
USER node
EXPOSE 3000
CMD ["node", "dist/index.js"]
