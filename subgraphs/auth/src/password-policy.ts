import { dictionary } from '@zxcvbn-ts/language-common';

/**
 * NIST SP 800-63B §5.1.1.2 (memorized secrets): a minimum length (12 here, above NIST's 8 for single-factor use),
 * a generous maximum with every character allowed, no composition rules, and a check against values known to be
 * commonly used or compromised and against context-specific words (the service's name, the user's email).
 * The common-password list is zxcvbn-ts's, built from breached-password corpora, bundled with the package.
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

const commonPasswords = new Set((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));

/** Why `password` may not be used, or null when it may. Never echoes the password. */
export function passwordProblem(password: string, context: { email?: string } = {}): string | null {
  // Length in characters as people count them (NIST: Unicode code points, after normalisation).
  const normalised = password.normalize('NFKC');
  const length = [...normalised].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    return `password must be ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters (any characters, spaces included)`;
  }
  const lower = normalised.toLowerCase();
  // A common password as it is, or with digits and symbols added at its end ("password2024!").
  const stem = lower.replace(/[\d\W_]+$/u, '');
  if (commonPasswords.has(lower) || (stem.length >= 4 && commonPasswords.has(stem))) {
    return 'password is too common: it appears in lists of breached passwords; choose a longer phrase of your own';
  }
  const local = context.email?.split('@')[0]?.toLowerCase() ?? '';
  if (lower.includes('linepack') || (local.length >= 3 && lower.includes(local))) {
    return 'password must not contain the service name or your email address';
  }
  return null;
}
