export { MAX_TEXT_BYTES, RULES_VERSION, type ScanOptions, scanBundle } from './scanner.js';
export {
  type Finding,
  type ScannedFile,
  type ScanResult,
  SEVERITIES,
  type Severity,
  severityRank,
  type Verdict,
  verdictOf,
} from './types.js';
