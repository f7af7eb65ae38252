# Builds and runs a Node.js application on Alpine Linux (smaller image, musl libc).
# Adapt: the Node version, the build script, the start file (dist/index.js), the port.
# Native add-ons may need build tools in the build stage: apk add --no-cache python3 make g++

FROM node:22.11.0-alpine3.20 AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build \
    && npm prune --omit=dev

FROM node:22.11.0-alpine3.20
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist

USER node
EXPOSE 3000
CMD ["node", "dist/index.js"]
