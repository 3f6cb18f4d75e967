import type { FastifyBaseLogger } from 'fastify';
import { CHANGES_CHANNEL, type ChangeMessage, parseChangeMessage } from '../db/change-notifications.js';
import type { Database } from '../db/client.js';
import { CatalogueState, type StateRow } from './catalogue-state.js';
import { ChangeFeed, type ChangeFeedOptions, FRESHNESS_LEASE_MS } from './change-feed.js';

/**
 * One CatalogueState (and one LISTEN connection) per open Database handle. Apps that share a handle
 * (several app instances in one process, as the tests build replicas) share what they know: a write
 * through one is known to the others at once. Separate handles (separate processes) learn of each
 * other's writes through NOTIFY.
 */
interface Hub {
  state: CatalogueState;
  feed?: ChangeFeed;
  /** PGlite's own LISTEN, undone on release. */
  unlisten?: () => Promise<void>;
  users: number;
  opening: Promise<void>;
}

/** The PGlite instance behind a drizzle handle, when it is one (it can LISTEN in process). */
interface PgliteListener {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

function pgliteOf(database: Database): PgliteListener | undefined {
  const client = (database.db as unknown as { $client?: Partial<PgliteListener> }).$client;
  return typeof client?.listen === 'function' ? (client as PgliteListener) : undefined;
}

function applyMessage(state: CatalogueState, message: ChangeMessage | undefined): void {
  if (!message) return;
  if (message.kind === 'revision') state.observeChange(message.revision, message.skill);
  else state.observeLoads(message.loadsRevision);
}

const hubs = new WeakMap<Database, Hub>();

export interface SharedState {
  state: CatalogueState;
  feed?: ChangeFeed;
  release(): Promise<void>;
}

export async function acquireSharedState(
  database: Database,
  readState: () => Promise<StateRow>,
  options: { feed?: ChangeFeedOptions; log?: FastifyBaseLogger } = {},
): Promise<SharedState> {
  let hub = hubs.get(database);
  if (!hub) {
    // With a read replica the revision is read on the primary, and the standby serves later reads only
    // once it has replayed what that read saw (src/db/read-routing.ts).
    const replica = database.readReplica;
    const state = new CatalogueState(replica ? () => replica.onPrimary(readState) : readState);
    const created: Hub = { state, users: 0, opening: Promise.resolve() };
    created.opening = open(created, database, options);
    hubs.set(database, created);
    hub = created;
  }
  hub.users += 1;
  const current = hub;
  try {
    await current.opening;
  } catch (error) {
    await release(database, current);
    throw error;
  }
  let released = false;
  return {
    state: current.state,
    feed: current.feed,
    async release() {
      if (released) return;
      released = true;
      await release(database, current);
    },
  };
}

async function open(
  hub: Hub,
  database: Database,
  options: { feed?: ChangeFeedOptions; log?: FastifyBaseLogger },
): Promise<void> {
  const { state } = hub;
  const { log } = options;
  if (database.kind === 'pglite' || !database.url) {
    // Embedded PGlite is opened by this process alone: every write goes through the repository hooks
    // of an app on this handle. Its own LISTEN also catches writes through any other code path.
    const pglite = pgliteOf(database);
    if (pglite) {
      hub.unlisten = await pglite.listen(CHANGES_CHANNEL, (payload) =>
        applyMessage(state, parseChangeMessage(payload)),
      );
    }
    await state.resync();
    state.setLive(true);
    return;
  }
  await state.resync();
  state.useLease(FRESHNESS_LEASE_MS);
  hub.feed = new ChangeFeed(
    database.url,
    {
      onMessage: (message) => {
        // First: reads started once the state has moved must not be served by a standby behind it.
        database.readReplica?.sawCommit();
        applyMessage(state, message);
      },
      resync: async () => {
        await state.resync();
      },
      onConfirmed: (sentAt) => state.confirm(sentAt),
      onLiveChange: (live) => {
        state.setLive(live);
        if (live) log?.debug('read cache: change feed live (LISTEN)');
        else log?.warn('read cache: change feed down; reading the revision row on every request');
      },
      onError: (error, context) => log?.warn({ err: error, context }, 'read cache: change feed error'),
    },
    options.feed,
  );
  await hub.feed.start();
}

async function release(database: Database, hub: Hub): Promise<void> {
  hub.users -= 1;
  if (hub.users > 0) return;
  if (hubs.get(database) === hub) hubs.delete(database);
  await hub.feed?.close();
  await hub.unlisten?.().catch(() => {});
}
