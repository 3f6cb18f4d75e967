# skill-registry container image:  docker build -t skill-registry .
#
# The image compiles the TypeScript once (`npm run build`, tsconfig.build.json -> dist/) and runs plain
# JavaScript, as `npm start` does after its prestart compiles: through tsx the service starts in about
# twice the time and with 40-60 MiB more memory per replica. dist/ keeps the source layout, so
# src/db/client.ts's ../../migrations is /app/migrations in the image as in the repo.

# An upstream LTS line (Node 20 reached its end of life in April 2026); CI runs the suite on it too.
ARG NODE_VERSION=24

# 1. Compile. TypeScript is a devDependency; no install script is needed to run tsc.
FROM node:${NODE_VERSION}-alpine AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# 2. Production dependencies only (pg is pure JavaScript, PGlite is WebAssembly: nothing to compile).
FROM node:${NODE_VERSION}-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. The runtime image: compiled code, production node_modules, migrations and seed skills.
FROM node:${NODE_VERSION}-alpine AS runtime
# tini is PID 1: it passes SIGTERM and SIGINT to the service and reaps any process left without a
# parent, which Node as PID 1 would leave as zombies. git serves the git faces ({scope}/git/...): its
# fast-import writes the repositories and its http-backend speaks the smart HTTP protocol.
RUN apk add --no-cache tini git
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    SKILLREG_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# `skillreg` on the PATH (docker exec ... skillreg token create ...): bin/skillreg.js runs dist/.
COPY bin ./bin
RUN ln -s /app/bin/skillreg.js /usr/local/bin/skillreg
COPY migrations ./migrations
COPY skills-seed ./skills-seed
# The web console's sources (and the two modules of the server's they import), bundled in memory by
# esbuild (a production dependency) on first use.
COPY src/console/app ./src/console/app
COPY src/domain/audit-actions.ts ./src/domain/audit-actions.ts
COPY src/domain/scope.ts ./src/domain/scope.ts
# The code stays owned by root, read-only for the service; only the embedded database's folder is
# writable, for runs without DATABASE_URL (mount a volume on /data to keep it).
RUN mkdir -p /data && chown node:node /data
# Built git repositories go to the system's temporary folder (SKILLREG_GIT_CACHE_DIR moves them).
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]
ENTRYPOINT ["/sbin/tini", "--"]
# A young generation of 3 x 4 MiB (V8 grows it to 3 x 16 MiB under load): see docs/DEPLOY.md, memory.
# No --enable-source-maps: it cost CPU on every read (docs/PERFORMANCE.md); stack traces name dist/*.js.
CMD ["node", "--max-semi-space-size=4", "dist/server.js"]
