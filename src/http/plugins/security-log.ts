import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { QuarantineError } from '../../services/quarantine.js';

/**
 * A publish the security scan quarantined is logged at warn here, where every face's errors pass
 * (native, Anthropic- and OpenAI-compatible uploads alike), on the request's logger so the line
 * carries its request id. Refused credentials are logged by the auth plugin, blocks found by a
 * rescan by the rescan service.
 */
async function securityLogPlugin(app: FastifyInstance) {
  app.addHook('onError', (request, _reply, error, done) => {
    if (error instanceof QuarantineError && error.logFields) {
      request.log.warn(
        { event: 'publish.quarantined', ...error.logFields },
        'publish quarantined by the security scan',
      );
    }
    done();
  });
}

export default fp(securityLogPlugin, { name: 'security-log' });
