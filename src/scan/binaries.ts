import { fileTypeFromBuffer } from 'file-type';
import type { Finding } from './types.js';

/**
 * Files that are no text: native executables block (nobody reviews machine code an agent is told to
 * run); archives are flagged, and block when they are password-protected (nothing can look inside) or
 * hold an executable. Types come from magic bytes (`file-type`), not from names.
 */

const EXECUTABLES = new Set(['elf', 'exe', 'macho', 'dll', 'msi', 'apk', 'class', 'deb', 'rpm']);
const ARCHIVES = new Set(['zip', 'tar', 'rar', 'gz', 'bz2', '7z', 'xz', 'cab', 'dmg', 'jar', 'tar.gz']);
const EXECUTABLE_NAME =
  /\.(?:exe|dll|scr|com|msi|bat|cmd|ps1|vbs|jar|app|dylib|so|elf|bin|run|appimage|pkg|dmg)$/i;

/** What zip local headers say: encrypted entries, and entries that are programs (by name or magic). */
function zipEntries(bytes: Uint8Array): { encrypted: string[]; executables: string[]; names: number } {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const encrypted: string[] = [];
  const executables: string[] = [];
  let names = 0;
  let at = 0;
  // Local file headers in order; bounded by the bytes and by a count no real bundle reaches.
  while (at + 30 <= view.length && names < 10_000) {
    if (view.readUInt32LE(at) !== 0x04034b50) break;
    const flags = view.readUInt16LE(at + 6);
    const method = view.readUInt16LE(at + 8);
    const compressed = view.readUInt32LE(at + 18);
    const nameLength = view.readUInt16LE(at + 26);
    const extraLength = view.readUInt16LE(at + 28);
    const name = view.toString('utf8', at + 30, Math.min(view.length, at + 30 + nameLength));
    const data = at + 30 + nameLength + extraLength;
    names++;
    if (flags & 0x1) encrypted.push(name);
    const head = method === 0 ? view.subarray(data, Math.min(view.length, data + 4)) : Buffer.alloc(0);
    if (
      EXECUTABLE_NAME.test(name) ||
      head.toString('latin1', 0, 2) === 'MZ' ||
      head.toString('latin1') === '\u007fELF'
    ) {
      executables.push(name);
    }
    // Sizes may live in a data descriptor (flag bit 3): then stop rather than guess.
    if (flags & 0x8 && compressed === 0) break;
    at = data + compressed;
  }
  return { encrypted, executables, names };
}

/** The first few entry names, for a detail. */
function listed(names: readonly string[]): string {
  return `${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}`;
}

export async function binaryFindings(path: string, bytes: Uint8Array): Promise<Finding[]> {
  const type = await fileTypeFromBuffer(bytes.subarray(0, 64 * 1024)).catch(() => undefined);
  if (!type) return [];
  if (EXECUTABLES.has(type.ext)) {
    return [
      {
        rule: 'binary-or-archive/executable',
        severity: 'high',
        path,
        line: 0,
        detail: `a native executable (${type.ext}, ${type.mime}): machine code nobody can review, run with the user's permissions. Ship source or scripts instead, or point to the tool's official installer`,
      },
    ];
  }
  if (!ARCHIVES.has(type.ext)) return [];
  if (type.ext === 'zip' || type.ext === 'jar') {
    const { encrypted, executables } = zipEntries(bytes);
    if (encrypted.length > 0) {
      return [
        {
          rule: 'binary-or-archive/encrypted-archive',
          severity: 'high',
          path,
          line: 0,
          detail: `a password-protected archive (${listed(encrypted)}): no scanner can see inside, which is why attackers use them. Ship the files themselves`,
        },
      ];
    }
    if (executables.length > 0) {
      return [
        {
          rule: 'binary-or-archive/archive-with-executable',
          severity: 'high',
          path,
          line: 0,
          detail: `an archive holding programs (${listed(executables)}): machine code nobody can review. Ship source or scripts instead`,
        },
      ];
    }
  }
  return [
    {
      rule: 'binary-or-archive/nested-archive',
      severity: 'medium',
      path,
      line: 0,
      detail: `a nested archive (${type.ext}): its contents are not scanned. Ship the files unpacked so they can be reviewed`,
    },
  ];
}
