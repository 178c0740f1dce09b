# Build stage compiles TypeScript; the runtime stage carries production dependencies only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# The SDK is an npm workspace: its package.json is part of the install.
COPY package.json package-lock.json ./
COPY packages/sdk/package.json ./packages/sdk/
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY packages ./packages
COPY src ./src
COPY workers ./workers
COPY server ./server
COPY providers ./providers
COPY bench ./bench
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json ./packages/sdk/
RUN npm ci --omit=dev --ignore-scripts
COPY --from=build /app/dist ./dist
# The demo calls the API through the SDK, linked from node_modules to this workspace.
COPY --from=build /app/packages/sdk/dist ./packages/sdk/dist
COPY migrations ./migrations
# The console's stylesheet, scripts and favicon, read at start (src/console/assets.ts).
COPY src/console/assets ./src/console/assets
COPY assets ./assets
USER node
EXPOSE 3000
CMD ["node", "dist/server/main.js", "api"]
