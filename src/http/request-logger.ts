import type { FastifyBaseLogger } from 'fastify';
import type { ChildLoggerOptions } from 'fastify/types/logger.js';

/**
 * A request's logger, created only when something is actually logged. Fastify makes a child logger
 * for every request (to bind its id); with pino that costs a few microseconds, a third of a cached
 * read, although at the default levels most requests never log a line. This child binds the same
 * fields and behaves the same the moment it writes.
 */
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogMethod = (...args: unknown[]) => void;
type Bindings = Record<string, unknown>;

class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: Record<string, unknown>,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  isLevelEnabled(level: string): boolean {
    const logger = (this.made ?? this.parent) as FastifyBaseLogger & {
      isLevelEnabled?(level: string): boolean;
    };
    return logger.isLevelEnabled ? logger.isLevelEnabled(level) : true;
  }

  private write(level: Level, args: unknown[]): void {
    if (this.made === undefined && !this.isLevelEnabled(level)) return;
    (this.logger[level] as LogMethod)(...args);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: Record<string, unknown>): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a lazy child unless the route sets its own level or serializers. */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  return new LazyRequestLogger(logger, bindings, {}) as unknown as FastifyBaseLogger;
}
