/**
 * A read carrying `X-Skillreg-Usage: ignore` is served but not counted in usage: the console sends
 * it, so people browsing skills do not look like agents using them.
 */
export const USAGE_HEADER = 'x-skillreg-usage';
