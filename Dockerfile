# skill-registry container image:  docker build -t skill-registry .
#
# The service runs its TypeScript through tsx, exactly as `npm start` does: tsx is a runtime dependency
# (the `skillreg` CLI needs it too), so the image runs the very files the tests run, with no compile step
# whose output could differ. `node --import tsx` keeps Node itself as the process that gets SIGTERM.

ARG NODE_VERSION=20

# 1. Production dependencies only: vitest, testcontainers, drizzle-kit and the other devDependencies stay out.
FROM node:${NODE_VERSION}-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 2. The runtime image: node_modules from stage 1, the sources, the migrations and the seed skills.
FROM node:${NODE_VERSION}-alpine AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    SKILLREG_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
COPY skills-seed ./skills-seed
# The code stays owned by root (read-only for the service); only the embedded database's folder is
# writable, for runs without DATABASE_URL (mount a volume on /data to keep it).
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/livez').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"]
CMD ["node", "--import", "tsx", "src/server.ts"]
