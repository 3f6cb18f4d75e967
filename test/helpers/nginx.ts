import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sleep } from './polling.js';
import { exitOf, freePort, REPO_ROOT } from './server-process.js';

/** Debian's nginx (`apt-get install nginx`); tests that need it skip without it. */
export const NGINX = '/usr/sbin/nginx';
export const hasNginx = existsSync(NGINX);

/** The project's shared-cache configuration, included as it is documented. */
export const DEPLOY_CONF = path.join(REPO_ROOT, 'deploy', 'nginx.conf');

export interface Nginx {
  /** Base URL of the cache, `http://127.0.0.1:<port>`. */
  url: string;
  /** What nginx wrote on stderr so far (its error log). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * nginx as its own process, with its own prefix, configuration, cache and temporary folders, on a
 * free port: the `http` block the contract describes (upstream `skillreg` over `origins`, taken in
 * turn; cache zone `skillreg`) around a server that includes deploy/nginx.conf. Never the system's
 * nginx or its port 80.
 */
export async function startNginx(origins: string | string[]): Promise<Nginx> {
  const servers = [origins].flat().map((origin) => `server ${new URL(origin).host};`);
  const prefix = await mkdtemp(path.join(os.tmpdir(), 'skillreg-nginx-'));
  const port = await freePort();
  const temp = (name: string) => path.join(prefix, 'temp', name);
  for (const name of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
    await mkdir(temp(name), { recursive: true });
  // As root the master would start its workers as `nobody`, who cannot write the folders above.
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  const config = `${user}
worker_processes 1;
pid ${path.join(prefix, 'nginx.pid')};
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${temp('body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  upstream skillreg { ${servers.join(' ')} keepalive 8; }
  proxy_cache_path ${path.join(prefix, 'cache')} levels=1:2 keys_zone=skillreg:10m max_size=256m;
  server {
    listen 127.0.0.1:${port};
    include ${DEPLOY_CONF};
  }
}
`;
  const file = path.join(prefix, 'nginx.conf');
  await writeFile(file, config);
  const child: ChildProcess = spawn(NGINX, ['-p', prefix, '-c', file, '-e', 'stderr', '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // QUIT: a graceful stop, workers finish what they serve.
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exitOf(child);
      clearTimeout(timer);
    }
    await rm(prefix, { recursive: true, force: true });
  };
  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`nginx exited ${child.exitCode}: ${stderr}`);
    }
    const up = await fetch(`${url}/livez`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (up) break;
    if (performance.now() - started > 10_000) {
      await stop();
      throw new Error(`nginx did not answer within 10 s: ${stderr}`);
    }
    await sleep(20);
  }
  return { url, log: () => stderr, stop };
}
