export { MAX_TEXT_BYTES, RULES_VERSION, type ScanOptions, scanBundle } from './scanner.js';
export {
  type Finding,
  SCAN_BUDGET_MS,
  type ScannedFile,
  type ScanResult,
  SEVERITIES,
  type Severity,
  severityRank,
  type Verdict,
  verdictOf,
} from './types.js';
