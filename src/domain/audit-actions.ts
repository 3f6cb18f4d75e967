/**
 * Every action the audit log records: the server's filter and the console's choices read this one
 * list (pure, so the browser bundle can import it).
 */
export const AUDIT_ACTIONS = [
  'publish',
  'tag',
  'yank',
  'token.create',
  'token.revoke',
  'view.put',
  'view.delete',
  'namespace.delete',
  'quarantine',
  'review',
  'release-by-rule',
  'trusted-publisher.put',
  'trusted-publisher.delete',
  'oidc.exchange',
  'oidc.refused',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
