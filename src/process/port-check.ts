import net from 'node:net';

/** Why the service cannot listen, in one line a person can act on. */
export class ListenError extends Error {
  override name = 'ListenError';
}

/** One line for a listen failure: the address, what is wrong with it, and what to change. */
export function describeListenError(error: unknown, host: string, port: number): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use by another process; stop it, or set PORT to a free port`;
    case 'EACCES':
      return `not allowed to listen on ${where} (ports below 1024 need privileges); set PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine; set HOST to one of its addresses (127.0.0.1, 0.0.0.0)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST ${host} does not resolve to an address; set HOST to an IP address or a resolvable name`;
    default:
      return undefined;
  }
}

/**
 * Finds out whether host:port can be listened on, before anything is migrated, seeded or written, by
 * listening on it and closing again at once. A process that takes the port in between is still caught
 * by the real listen, with the same one-line message.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', (error) => {
      const line = describeListenError(error, host, port);
      reject(line ? new ListenError(line) : error);
    });
    // exclusive: a cluster worker must not share the primary's handle and so miss a holder.
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
